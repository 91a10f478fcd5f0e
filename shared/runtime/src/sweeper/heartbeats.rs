//! The heartbeat duty: the one duty that runs beside the others instead of in their line, so no
//! duty (the batcher's provider calls can hold a sweep for minutes) delays a heartbeat, and with
//! a capacity that grows with the waiting callbacks instead of a fixed number of pages
//! (docs/lifecycle.md, "Callbacks"). It takes pages of due callbacks, shared between tenants in
//! turns, and calls at most `AITASK_CALLBACK_CALLS_PER_SECOND`, `AITASK_CALLBACK_CONCURRENCY` at
//! once, until nothing is due and the other duties are done, or its budget
//! (`AITASK_CALLBACK_HEARTBEAT_BUDGET_MS`) is spent and they are done. While the other duties
//! still run it keeps looking, so a long sweep heartbeats what comes due during it.

use std::time::{Duration, Instant};

use aitasks_store::{self as store, StoreError};
use tokio::sync::watch;

use crate::app::App;
use crate::callbacks::{self, HeartbeatCalls, Pace};
use crate::metrics::{Document, Unit};

/// The duty's name in the log and in the `Duty` dimension of `SweepDutyFailures`.
pub(super) const NAME: &str = "heartbeatCallbacks";
/// However long the other duties run, the duty stops by then: the sweeper's Lambda has 180 s.
const HARD_STOP: Duration = Duration::from_secs(150);
/// The longest wait for more work while the other duties run.
const IDLE: Duration = Duration::from_secs(1);

/// What one run of the duty did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct HeartbeatRun {
    pub(super) sent: u64,
    pub(super) gone: u64,
    pub(super) failed: u64,
    pub(super) canceled: u64,
    pub(super) owed_late: u64,
    pub(super) pages: u64,
    /// Time spent in the store: taking the pages and recording what the calls came to.
    pub(super) db: Duration,
    /// It stopped with callbacks still due: the capacity is short of the waiting callbacks.
    pub(super) cut_short: bool,
}

/// Heartbeat what is due until nothing is, or the budget is spent, once `others_done` says the
/// sweep's other duties have finished.
pub(super) async fn run<P>(
    app: &App<P>,
    mut others_done: watch::Receiver<bool>,
) -> Result<HeartbeatRun, StoreError> {
    let mut run = HeartbeatRun::default();
    let Some(callers) = &app.callbacks else { return Ok(run) };
    let config = &app.settings.runtime;
    let capacity = &config.callbacks;
    let pace = Pace::new(capacity.calls_per_second);
    let how = HeartbeatCalls {
        pace: &pace,
        concurrency: capacity.concurrency,
        cancel_when_gone: config.cancel_when_gone,
    };
    let idle = IDLE.min(config.callback_heartbeat / 4);
    let page = config.sweep_page;
    let client = store::client(&app.pool).await?;
    let started = Instant::now();
    loop {
        let alone = *others_done.borrow();
        let elapsed = started.elapsed();
        if elapsed >= HARD_STOP {
            break;
        }
        let taking = Instant::now();
        let due = store::take_heartbeats(&client, config.callback_heartbeat, page).await?;
        run.db += taking.elapsed();
        run.pages += 1;
        if due.is_empty() {
            if alone {
                break;
            }
            // Nothing due now: look again shortly, or once the other duties are done.
            let _ = tokio::time::timeout(idle, others_done.changed()).await;
            continue;
        }
        let full = due.len() >= page;
        run.owed_late += due.iter().filter(|d| d.owed).count() as u64;
        let beats = callbacks::heartbeat_due(callers, &client, due, &how).await?;
        run.sent += beats.sent;
        run.gone += beats.gone;
        run.failed += beats.failed;
        run.canceled += beats.canceled.len() as u64;
        run.db += beats.db;
        app.announce(beats.canceled).await;
        if alone && elapsed >= capacity.heartbeat_budget {
            run.cut_short = full;
            break;
        }
    }
    if run.cut_short {
        tracing::warn!(
            sent = run.sent,
            per_sweep = capacity.heartbeats_per_sweep(),
            "callbacks still due at the end of the heartbeat budget: more callbacks wait than the sweep can heartbeat (AITASK_CALLBACK_CALLS_PER_SECOND x AITASK_CALLBACK_HEARTBEAT_BUDGET_MS)"
        );
        Document::new(&[&[]]).metric("CallbackHeartbeatsCutShort", Unit::Count, 1.0).emit();
    }
    Ok(run)
}
