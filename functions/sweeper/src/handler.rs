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
    match aitasks_runtime::batcher::sample_deferred(app).await {
        Ok(sample) => deferred_metrics(&sample).into_iter().for_each(Document::emit),
        Err(error) => {
            tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not sample the deferred tasks")
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

/// Deferred tasks awaiting a batch and the age of the oldest, by model profile; and the time left
/// before the nearest window end of a deferred task not yet done (`DeferredWindowLeftMs`, which
/// `DeferredDeadlineAlarm` watches; a full day when there is none, so the alarm stays quiet).
fn deferred_metrics(sample: &aitasks_runtime::batcher::DeferredSample) -> Vec<Document> {
    const A_DAY_MS: f64 = 86_400_000.0;
    let mut documents: Vec<Document> = sample
        .profiles
        .iter()
        .map(|profile| {
            Document::new(&[&["ModelId"]])
                .dimension("ModelId", &profile.profile)
                .metric("DeferredWaiting", Unit::Count, profile.waiting as f64)
                .metric("OldestDeferredAgeMs", Unit::Milliseconds, profile.oldest_ms.unwrap_or(0.0))
        })
        .collect();
    documents.push(Document::new(&[&[]]).metric(
        "DeferredWindowLeftMs",
        Unit::Milliseconds,
        sample.nearest_window_ms.unwrap_or(A_DAY_MS),
    ));
    documents
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
        .metric("BatchesOpened", Unit::Count, count(summary.batches.batches_opened))
        .metric("BatchRecords", Unit::Count, count(summary.batches.batched_tasks))
        .metric("BatchesSubmitted", Unit::Count, count(summary.batches.batches_submitted))
        .metric("BatchesCompleted", Unit::Count, count(summary.batches.batches_completed))
        .metric("BatchesFailed", Unit::Count, count(summary.batches.batches_failed))
        .metric("DeferredSentNow", Unit::Count, count(summary.batches.deferred_sent_now))
        .metric("SweepMs", Unit::Milliseconds, count(summary.elapsed_ms))
}
