//! `sweeper`, on an EventBridge schedule: runs every duty once and logs a one-line JSON
//! summary. The schedule's event carries nothing we need.

use aitasks_runtime::{sweeper, App};
use lambda_runtime::{Error, LambdaEvent};
use serde_json::Value;

/// Sweep once; the summary is also the invocation's result.
pub async fn handle<P>(app: &App<P>, _event: LambdaEvent<Value>) -> Result<sweeper::SweepSummary, Error> {
    let summary = sweeper::sweep(app).await.inspect_err(|error| {
        tracing::error!(error = %aitasks_runtime::error_chain(error), "the sweep stopped");
    })?;
    // One JSON line per run, on stdout, whatever the log format.
    println!("{}", serde_json::json!({"sweep": summary}));
    Ok(summary)
}
