//! `sweeper`, on an EventBridge schedule: runs every duty once and logs a one-line JSON
//! summary. The schedule's event carries nothing we need; a Bedrock job-state event (the
//! stack's `BatchJobStateRule`) first makes the batch of that job due, so this sweep reads a
//! finished job's results. A duty that failed (each is logged and counted by the runtime, and
//! the others still ran) makes the invocation an error, so the stack's `SweeperErrorsAlarm` sees
//! it.

use aitasks_runtime::metrics::{Document, Unit};
use aitasks_runtime::{sweeper, App};
use lambda_runtime::{Error, LambdaEvent};
use serde_json::Value;

/// Sweep once; the summary is also the invocation's result.
pub async fn handle<P>(app: &App<P>, event: LambdaEvent<Value>) -> Result<sweeper::SweepSummary, Error> {
    let jobs = changed_jobs(&event.payload);
    if !jobs.is_empty() {
        // A missed wake-up costs only the wait for the batch's next poll.
        match aitasks_runtime::batcher::look_now(app, &jobs).await {
            Ok(due) => tracing::info!(jobs = jobs.len(), due, "a batch job changed state"),
            Err(error) => {
                tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not make the changed batch due")
            }
        }
    }
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

/// The jobs a Bedrock "Batch Inference Job State Change" event names (its `resources` and
/// `detail.batchJobArn`, ARNs as the batch records them); none for any other event. Bounded: the
/// event is input.
pub fn changed_jobs(event: &Value) -> Vec<String> {
    if event["source"] != "aws.bedrock" || event["detail-type"] != "Batch Inference Job State Change" {
        return Vec::new();
    }
    let resources = event["resources"].as_array().into_iter().flatten().filter_map(Value::as_str);
    let mut jobs: Vec<String> = resources
        .chain(event["detail"]["batchJobArn"].as_str())
        .filter(|arn| !arn.is_empty() && arn.len() <= 2048)
        .take(aitasks_runtime::batcher::MAX_CHANGED_JOBS * 2)
        .map(str::to_owned)
        .collect();
    jobs.sort();
    jobs.dedup();
    jobs.truncate(aitasks_runtime::batcher::MAX_CHANGED_JOBS);
    jobs
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
        .metric("CallbackHeartbeatsThrottled", Unit::Count, count(summary.heartbeats_throttled))
        .metric("CallbacksWaiting", Unit::Count, count(summary.callbacks_waiting))
        .metric_opt("CallbackHeartbeatSecondsKept", Unit::Seconds, summary.heartbeat_seconds_kept.map(count))
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
        .metric_opt("ProfilesHeld", Unit::Count, summary.profiles_held.map(count))
        .metric("SweepMs", Unit::Milliseconds, count(summary.elapsed_ms))
}

#[cfg(test)]
mod tests {
    use super::changed_jobs;
    use serde_json::json;

    const KIND: &str = "Batch Inference Job State Change";

    #[test]
    fn the_schedule_s_event_names_no_job() {
        assert!(changed_jobs(&json!({"source": "aws.events", "detail-type": "Scheduled Event"})).is_empty());
        assert!(changed_jobs(
            &json!({"source": "aws.bedrock", "detail-type": "Model Customization Job State Change",
            "resources": ["arn:aws:bedrock:us-east-1:1:model-customization-job/x"]})
        )
        .is_empty());
    }

    #[test]
    fn a_job_state_event_names_its_job_once() {
        let arn = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc123";
        let event = json!({"source": "aws.bedrock", "detail-type": KIND, "resources": [arn],
            "detail": {"batchJobArn": arn, "status": "Completed"}});
        assert_eq!(changed_jobs(&event), vec![arn.to_owned()]);
    }

    #[test]
    fn a_hostile_event_names_a_bounded_few() {
        let resources: Vec<serde_json::Value> = (0..10_000)
            .map(|i| json!(format!("arn:job/{i}")))
            .chain([json!(7), json!(""), json!("x".repeat(5000))])
            .collect();
        let jobs =
            changed_jobs(&json!({"source": "aws.bedrock", "detail-type": KIND, "resources": resources,
            "detail": {"batchJobArn": {"not": "a string"}}}));
        assert_eq!(jobs.len(), aitasks_runtime::batcher::MAX_CHANGED_JOBS);
        assert!(jobs.iter().all(|job| job.starts_with("arn:job/")));
    }
}
