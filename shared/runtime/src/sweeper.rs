//! The scheduled sweeper: every duty of docs/lifecycle.md, each in bounded batches that any number of
//! concurrent invocations can run side by side (`FOR UPDATE SKIP LOCKED` in every statement).

use std::time::{Duration, Instant};

use aitasks_store::{self as store, StoreError};
use serde::Serialize;

use crate::app::App;

/// Admission history and released results are kept for 24 hours.
pub const HORIZON: Duration = Duration::from_secs(24 * 60 * 60);
/// Delivered completion events are kept for a day, for inspection.
const DELIVERED_EVENTS_KEPT: Duration = Duration::from_secs(24 * 60 * 60);
/// A message sent this long ago should be counted by the queue (SQS's approximate counts lag
/// up to a minute).
const LOST_AFTER: Duration = Duration::from_secs(60);
/// An undelivered event is hidden from other sweepers this long while one delivers it.
const EVENT_LEASE: Duration = Duration::from_secs(60);

/// What one sweep did; logged as one JSON line per run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepSummary {
    pub queue_timed_out: u64,
    pub stale_requeued: u64,
    pub stale_interrupted: u64,
    pub stale_canceled: u64,
    pub messages_sent: u64,
    pub messages_failed: u64,
    /// The queue held fewer messages than the store owed: those sent again
    /// (`crate::redelivery`).
    pub messages_restored: u64,
    pub restored_possible_duplicates: u64,
    pub events_delivered: u64,
    pub admissions_pruned: u64,
    pub events_pruned: u64,
    pub released_deleted: u64,
    pub quota_days_pruned: u64,
    /// Per-minute provider counts older than an hour (`limits` in `AITASK_MODELS`).
    pub provider_minutes_pruned: u64,
    /// Tasks a run's cancel reached here because the cancel request ran out of time.
    pub run_tasks_canceled: u64,
    pub run_cancels_finished: u64,
    pub elapsed_ms: u64,
}

/// Run every duty once (each up to `sweep_max_batches` batches).
pub async fn sweep<P>(app: &App<P>) -> Result<SweepSummary, StoreError> {
    let started = Instant::now();
    let config = &app.settings.runtime;
    let (batch, max_batches) = (config.sweep_batch, config.sweep_max_batches);
    let mut summary = SweepSummary::default();
    let client = store::client(&app.pool).await?;

    for _ in 0..max_batches {
        let settled = store::expire_queued(&client, config.queue_timeout, batch).await?;
        let n = settled.len();
        for s in &settled {
            match s.task.status {
                store::TaskStatus::Canceled => summary.stale_canceled += 1,
                _ => summary.queue_timed_out += 1,
            }
        }
        app.publish(settled.into_iter().map(|s| s.event).collect()).await;
        if n < batch {
            break;
        }
    }

    for _ in 0..max_batches {
        let expired = store::expire_running(&client, config.stale_running, batch).await?;
        let n = expired.requeued.len() + expired.settled.len();
        summary.stale_requeued += expired.requeued.len() as u64;
        for s in &expired.settled {
            match s.task.status {
                store::TaskStatus::Canceled => summary.stale_canceled += 1,
                _ => summary.stale_interrupted += 1,
            }
        }
        app.publish(expired.settled.into_iter().map(|s| s.event).collect()).await;
        if n < batch {
            break;
        }
    }

    // A message the queue lost is sent again now rather than after `resend_after`. Only those
    // sent over a minute ago count: SQS's counts lag about that much.
    let restored = crate::redelivery::restore_lost_messages(app, LOST_AFTER, batch).await?;
    summary.messages_restored += restored.resent;
    summary.restored_possible_duplicates += restored.possible_duplicates;
    summary.messages_failed += restored.failed;

    // Before re-sending owed messages: a task canceled here needs none.
    for run_id in store::pending_run_cancels(&client, batch).await? {
        for _ in 0..max_batches {
            let canceled = store::cancel_run_tasks(&client, run_id, batch).await?;
            let done = canceled.touched() < batch;
            summary.run_tasks_canceled += canceled.touched() as u64;
            app.publish(canceled.ended).await;
            if done {
                break;
            }
        }
        if store::finish_run_cancel(&client, run_id).await? {
            summary.run_cancels_finished += 1;
        }
    }

    for _ in 0..max_batches {
        let owed = store::claim_unsent(&client, config.unsent_grace, config.resend_after, batch).await?;
        let failed = app.queues.send_tasks(&owed).await;
        if !failed.is_empty() {
            store::mark_unsent(&client, &failed).await?;
        }
        summary.messages_sent += (owed.len() - failed.len()) as u64;
        summary.messages_failed += failed.len() as u64;
        if owed.len() < batch || !failed.is_empty() {
            break;
        }
    }

    for _ in 0..max_batches {
        let events = store::lease_pending_events(&client, EVENT_LEASE, batch).await?;
        let delivered = app.queues.publish_events(&events).await;
        summary.events_delivered += store::mark_delivered(&client, &delivered).await?;
        if events.len() < batch || delivered.len() < events.len() {
            break;
        }
    }

    for _ in 0..max_batches {
        let n = store::prune_admissions(&client, HORIZON, batch).await?;
        summary.admissions_pruned += n;
        if n < batch as u64 {
            break;
        }
    }
    for _ in 0..max_batches {
        let n = store::prune_delivered_events(&client, DELIVERED_EVENTS_KEPT, batch).await?;
        summary.events_pruned += n;
        if n < batch as u64 {
            break;
        }
    }
    for _ in 0..max_batches {
        let n = store::delete_retained(&client, HORIZON, batch).await?;
        summary.released_deleted += n;
        if n < batch as u64 {
            break;
        }
    }

    for _ in 0..max_batches {
        let n = store::prune_usage(&client, batch).await?;
        summary.quota_days_pruned += n;
        if n < batch as u64 {
            break;
        }
    }

    for _ in 0..max_batches {
        let n = store::prune_provider_usage(&client, batch).await?;
        summary.provider_minutes_pruned += n;
        if n < batch as u64 {
            break;
        }
    }

    summary.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(summary)
}

/// Queued and running tasks are counted up to this many each (a bounded look).
const BACKLOG_COUNT_CAP: usize = 100_000;

/// The backlog as one sweep sees it: the store's work in flight and the task queue's messages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BacklogSample {
    #[serde(flatten)]
    pub store: store::Backlog,
    /// Visible, in flight and delayed messages; `None` when SQS did not answer.
    pub queue_messages: Option<u64>,
}

/// Sample the backlog for the metrics (a failed SQS look leaves its figure out).
pub async fn sample_backlog<P>(app: &App<P>) -> Result<BacklogSample, StoreError> {
    let client = store::client(&app.pool).await?;
    let store = store::backlog(&client, BACKLOG_COUNT_CAP).await?;
    drop(client);
    let queue_messages = app
        .queues
        .task_queue_depth()
        .await
        .inspect_err(|error| tracing::warn!(error = %crate::error_chain(error), "could not read the task queue's depth"))
        .ok();
    Ok(BacklogSample { store, queue_messages })
}
