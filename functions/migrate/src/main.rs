//! The `migrate` Lambda. Nothing fallible happens before the runtime loop: the database secret is
//! read on the first event, so every failure reaches CloudFormation as a `FAILED` answer.

// The handler's future nests the secret fetch, the migration and the deadline; laying out the
// whole runtime loop's future goes past the default query depth.
#![recursion_limit = "256"]

use std::sync::Arc;

use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    aitasks_telemetry::init_tracing();
    migrate::install_panic_answer();
    let migrator = Arc::new(migrate::Migrator::new());
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        let migrator = migrator.clone();
        async move { migrate::handle(&migrator, event).await }
    }))
    .await
}
