//! The scheduled sweeper: every duty of docs/lifecycle.md, in a table ([`DUTIES`]). Each duty
//! works in bounded pages (`AITASK_SWEEP_PAGE` rows a statement, `AITASK_SWEEP_MAX_PAGES`
//! statements) that any number of concurrent invocations can run side by side (`FOR UPDATE SKIP
//! LOCKED` in every statement), and each fails alone: a duty whose store call fails is logged
//! and counted (`SweepDutyFailures`, by duty), and the next duty runs. The heartbeat duty runs
//! beside the table, on its own budget ([`heartbeats`]).

mod backlog;
mod duties;
mod heartbeat_plan;
mod heartbeats;
mod pages;
mod redelivery;
mod stale_running;

pub use stale_running::{expire_stale_running, stale_ending, ExpiredPage};

use std::time::{Duration, Instant};

use aitasks_store::StoreError;
use serde::Serialize;

use pages::Pages;

use crate::app::App;
use crate::metrics::{Document, Unit};

pub use backlog::{sample_backlog, BacklogSample};
pub use duties::{Duty, DUTIES};
pub use redelivery::Restored;

/// Admission history and released results are kept for 24 hours.
pub const HORIZON: Duration = Duration::from_secs(24 * 60 * 60);

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
    /// ([`restore_lost_messages`]).
    pub messages_restored: u64,
    pub restored_possible_duplicates: u64,
    pub events_delivered: u64,
    /// Callbacks answered here (not by the function that ended their task).
    pub callbacks_delivered: u64,
    pub callback_heartbeats: u64,
    /// The heartbeat duty's pages, its time in the store, and whether it stopped with
    /// callbacks still due (the capacity is short: `CallbackHeartbeatsCutShort`).
    pub heartbeat_pages: u64,
    pub heartbeat_db_ms: u64,
    pub heartbeats_cut_short: bool,
    /// Heartbeat calls AWS throttled (each callback is due again at once; the pace slowed).
    pub heartbeats_throttled: u64,
    /// Callbacks waiting when the sweep started (each tenant counted up to 20 sweeps' worth),
    /// and the `HeartbeatSeconds` a state needs, with them and what this sweep could send, to
    /// never time out (`CallbackHeartbeatSecondsKept`; none when nothing waits).
    pub callbacks_waiting: u64,
    pub heartbeat_seconds_kept: Option<u64>,
    /// Callers found gone (their token timed out or is unknown): no more calls to them.
    pub callbacks_gone: u64,
    /// Calls that failed (retried later) or were refused for good.
    pub callback_failures: u64,
    /// Queued tasks canceled because every caller waiting for them was gone.
    pub callback_tasks_canceled: u64,
    /// Callbacks the heartbeat found waiting for a task that had ended (made owed then).
    pub callbacks_owed_late: u64,
    pub admissions_pruned: u64,
    pub events_pruned: u64,
    /// Tasks whose live output was deleted.
    pub outputs_pruned: u64,
    /// Activity rows folded (a minute's per backend into one, a minute into its hour), and hour
    /// rows deleted after 93 days.
    pub activity_rows_folded: u64,
    pub activity_rows_pruned: u64,
    pub released_deleted: u64,
    pub quota_days_pruned: u64,
    /// Per-minute provider counts older than an hour (`limits` in `AITASK_MODELS`).
    pub provider_minutes_pruned: u64,
    /// Tasks a run's cancel reached here because the cancel request ran out of time.
    pub run_tasks_canceled: u64,
    pub run_cancels_finished: u64,
    /// Parked tasks of released holds sent again here, and probes of automatic holds sent here
    /// because none ran for two intervals (docs/api.md, "Holds").
    pub holds_resent: u64,
    pub hold_probes: u64,
    /// Profiles held automatically, as the holds duty found them (`ProfilesHeld`, which
    /// ProfileHeldAlarm watches); none when it could not read them (no figure, rather than a 0
    /// that would clear the alarm while a profile is held).
    pub profiles_held: Option<u64>,
    /// Pages of running operations worked, and the operations they ended.
    pub operation_pages: u64,
    pub operations_ended: u64,
    /// Ended batches deleted after a day.
    pub batches_pruned: u64,
    /// Deferred tasks and their batches ([`crate::batcher`]).
    #[serde(flatten)]
    pub batches: crate::batcher::BatchSummary,
    /// The duties that failed this time (each logged with its error); the others ran.
    pub failed_duties: Vec<&'static str>,
    pub elapsed_ms: u64,
}

/// Give the events handed over in the `within` before the newest one back to the outbox, for
/// the sweeper to publish (`store::hand_back_recent`): what the dev server runs when it starts,
/// since its queue keeps messages in memory and none may be left to bring back an event whose
/// worker died before its publish (docs/lifecycle.md, "Completion events"). The window ends at
/// the newest handed-over event, not now, so a stack started again long after it stopped still
/// finds the events of its last invocations. A page at a time until the window holds none.
/// Answers how many.
pub async fn hand_back_recent_events<P>(app: &App<P>, within: Duration) -> Result<u64, StoreError> {
    let page = app.settings.runtime.sweep_page;
    let client = aitasks_store::client(&app.pool).await?;
    let Some(newest) = aitasks_store::newest_handed_over(&client).await? else { return Ok(0) };
    let since = chrono::TimeDelta::from_std(within)
        .ok()
        .and_then(|window| newest.checked_sub_signed(window))
        .unwrap_or(chrono::DateTime::UNIX_EPOCH);
    let mut handed_back = 0;
    loop {
        let took = aitasks_store::hand_back_recent(&client, since, page).await?;
        handed_back += took;
        if took < page as u64 {
            return Ok(handed_back);
        }
    }
}

/// Look for task messages the queue lost (sent more than `older_than` ago) and send them again:
/// the sweep's `restoreLost` duty on its own, which the dev server runs when it starts.
pub async fn restore_lost_messages<P>(app: &App<P>, older_than: Duration) -> Result<Restored, StoreError> {
    let config = &app.settings.runtime;
    let client = aitasks_store::client(&app.pool).await?;
    redelivery::restore(app, &client, older_than, Pages::new(config.sweep_page, config.sweep_max_pages)).await
}

/// Run every duty once, in the table's order, and the heartbeat duty beside them from the start;
/// a failing duty does not stop the others.
pub async fn sweep<P>(app: &App<P>) -> SweepSummary {
    let started = Instant::now();
    let (done, others_done) = tokio::sync::watch::channel(false);
    let in_line = async {
        let mut summary = SweepSummary::default();
        for duty in DUTIES {
            if let Err(error) = duty.run(app, &mut summary).await {
                failed(duty.name(), &error);
                summary.failed_duties.push(duty.name());
            }
        }
        // The heartbeat duty stops once these are done and its own budget is spent.
        let _ = done.send(true);
        summary
    };
    let (beats, mut summary) = tokio::join!(heartbeats::run(app, others_done), in_line);
    match beats {
        Ok(run) => {
            summary.callback_heartbeats += run.sent;
            summary.callbacks_gone += run.gone;
            summary.callback_failures += run.failed;
            summary.callback_tasks_canceled += run.canceled;
            summary.callbacks_owed_late += run.owed_late;
            summary.heartbeat_pages = run.pages;
            summary.heartbeat_db_ms = u64::try_from(run.db.as_millis()).unwrap_or(u64::MAX);
            summary.heartbeats_cut_short = run.cut_short;
            summary.heartbeats_throttled = run.throttled;
            summary.callbacks_waiting = run.waiting;
            // Whole seconds, rounded up: a bound.
            summary.heartbeat_seconds_kept =
                run.seconds_kept.map(|kept| kept.as_secs() + u64::from(kept.subsec_nanos() > 0));
        }
        Err(error) => {
            failed(heartbeats::NAME, &error);
            summary.failed_duties.push(heartbeats::NAME);
        }
    }
    summary.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    summary
}

/// A duty failed: logged with its error, and counted by duty.
fn failed(duty: &'static str, error: &StoreError) {
    tracing::error!(duty, error = %crate::error_chain(error), "a sweep duty failed; the others still run");
    Document::new(&[&["Duty"]]).dimension("Duty", duty).metric("SweepDutyFailures", Unit::Count, 1.0).emit();
}
