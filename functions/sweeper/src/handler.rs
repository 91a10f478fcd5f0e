//! `sweeper`, on an EventBridge schedule: runs every duty once and logs a one-line JSON
//! summary. The schedule's event carries nothing we need. A duty that failed (each is logged
//! and counted by the runtime, and the others still ran) makes the invocation an error, so the
//! stack's `SweeperErrorsAlarm` sees it.

use aitasks_runtime::metrics::{Document, Unit};
use aitasks_runtime::{sweeper, App};
use lambda_runtime::{Error, LambdaEvent};
use serde_json::Value;

/// Sweep once; the summary is also the invocation's result.
pub async fn handle<P>(app: &App<P>, _event: LambdaEvent<Value>) -> Result<sweeper::SweepSummary, Error> {
    let summary = sweeper::sweep(app).await;
    // One JSON line per run, on stdout, whatever the log format.
    println!("{}", serde_json::json!({"sweep": summary}));
    sweep_metrics(&summary).emit();
    // The backlog's figures are worth a sweep's while, not its failure.
    match sweeper::sample_backlog(app).await {
        Ok(sample) => backlog_metrics(&sample).emit(),
        Err(error) => {
            tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not sample the backlog")
        }
    }
    if !summary.failed_duties.is_empty() {
        return Err(format!("sweep duties failed: {}", summary.failed_duties.join(", ")).into());
    }
    Ok(summary)
}

/// The work waiting and in flight, sampled once a sweep (one series each, no dimensions).
fn backlog_metrics(sample: &sweeper::BacklogSample) -> Document {
    let store = &sample.store;
    Document::new(&[&[]])
        .metric("QueuedTasks", Unit::Count, store.queued as f64)
        .metric("RunningTasks", Unit::Count, store.running as f64)
        .metric("OldestQueuedAgeMs", Unit::Milliseconds, store.oldest_queued_ms.unwrap_or(0.0))
        .metric("OldestRunningAgeMs", Unit::Milliseconds, store.oldest_running_ms.unwrap_or(0.0))
        .metric_opt("TaskQueueMessages", Unit::Count, sample.queue_messages.map(|n| n as f64))
}

/// The sweep's repairs and housekeeping, as metrics without dimensions (one series each).
fn sweep_metrics(summary: &sweeper::SweepSummary) -> Document {
    let count = |n: u64| n as f64;
    Document::new(&[&[]])
        .metric("QueueTimedOut", Unit::Count, count(summary.queue_timed_out))
        .metric("StaleRequeued", Unit::Count, count(summary.stale_requeued))
        .metric("StaleInterrupted", Unit::Count, count(summary.stale_interrupted))
        .metric("StaleCanceled", Unit::Count, count(summary.stale_canceled))
        .metric("MessagesResent", Unit::Count, count(summary.messages_sent))
        .metric("MessagesRestored", Unit::Count, count(summary.messages_restored))
        .metric("MessagesFailed", Unit::Count, count(summary.messages_failed))
        .metric("EventsRedelivered", Unit::Count, count(summary.events_delivered))
        .metric("CallbacksRedelivered", Unit::Count, count(summary.callbacks_delivered))
        .metric("CallbackHeartbeats", Unit::Count, count(summary.callback_heartbeats))
        .metric("CallbacksGone", Unit::Count, count(summary.callbacks_gone))
        .metric("CallbackFailures", Unit::Count, count(summary.callback_failures))
        .metric("CallbackTasksCanceled", Unit::Count, count(summary.callback_tasks_canceled))
        .metric("RunTasksCanceled", Unit::Count, count(summary.run_tasks_canceled))
        .metric("ReleasedDeleted", Unit::Count, count(summary.released_deleted))
        .metric("SweepMs", Unit::Milliseconds, count(summary.elapsed_ms))
}
