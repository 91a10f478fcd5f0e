//! The heartbeat duty: the one duty that runs beside the others instead of in their line, so no
//! duty (the batcher's provider calls can hold a sweep for minutes) delays a heartbeat, and with
//! a capacity that grows with the waiting callbacks instead of a fixed number of pages
//! (docs/lifecycle.md, "Callbacks").
//!
//! It counts the waiting callbacks first, and paces its calls so the sweep's heartbeats spread
//! over its window (`RuntimeConfig::heartbeat_window`, from the sweep's start) instead of coming
//! in a burst, at most `AITASK_CALLBACK_CALLS_PER_SECOND`, `AITASK_CALLBACK_CONCURRENCY` at
//! once, slowing when AWS throttles. It takes pages of due callbacks, shared between tenants in
//! turns, and when none is due it waits for the next to come due, for as long as the window
//! lasts: a callback heartbeated late in one sweep comes due during the next one's window and
//! is heartbeated then, never skipped to the sweep after. While the other duties still run it
//! keeps going past the window, so a long sweep heartbeats what comes due during it. At its end
//! it says which `HeartbeatSeconds` the stack keeps with the callbacks that wait.

use std::time::{Duration, Instant};

use aitasks_store::{self as store, StoreError, WaitingCallbacks};
use tokio::sync::watch;

use super::heartbeat_plan::{spread_rate, Keeping};
use crate::app::App;
use crate::callbacks::{self, HeartbeatCalls, Pace};
use crate::metrics::{Document, Unit};

/// The duty's name in the log and in the `Duty` dimension of `SweepDutyFailures`.
pub(super) const NAME: &str = "heartbeatCallbacks";
/// However long the other duties run, the duty stops by then: the sweeper's Lambda has 180 s.
const HARD_STOP: Duration = Duration::from_secs(150);
/// The longest wait between looks, whatever the next due time says.
const LONGEST_WAIT: Duration = Duration::from_secs(5);
/// The shortest wait after a page that came back empty.
const NOT_AT_ONCE: Duration = Duration::from_millis(50);
/// Waiting callbacks counted a tenant, in sweeps' worth of the rate, when that is more than a
/// tenant may have waiting (`AITASK_TENANT_WAITING_CALLBACKS`, which bounds the count anyway):
/// each tenant is counted whole up to its limit, so the stated figure is never lower than what
/// its callbacks wait.
const COUNTED_SWEEPS: u64 = 20;

/// What one run of the duty did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct HeartbeatRun {
    pub(super) sent: u64,
    pub(super) gone: u64,
    pub(super) failed: u64,
    pub(super) throttled: u64,
    pub(super) canceled: u64,
    pub(super) owed_late: u64,
    pub(super) pages: u64,
    /// Callbacks waiting when it started (each tenant counted up to a bound).
    pub(super) waiting: u64,
    /// The `HeartbeatSeconds` a state needs to never time out, with what waits and what this
    /// sweep could send (none when nothing waits).
    pub(super) seconds_kept: Option<Duration>,
    /// Time spent in the store: taking the pages and recording what the calls came to.
    pub(super) db: Duration,
    /// It stopped with callbacks still due: the capacity is short of the waiting callbacks.
    pub(super) cut_short: bool,
}

/// Heartbeat what is due, and what comes due within the window, until the window has passed and
/// `others_done` says the sweep's other duties have finished.
pub(super) async fn run<P>(
    app: &App<P>,
    mut others_done: watch::Receiver<bool>,
) -> Result<HeartbeatRun, StoreError> {
    let mut run = HeartbeatRun::default();
    let Some(callers) = &app.callbacks else { return Ok(run) };
    let started = Instant::now();
    let config = &app.settings.runtime;
    let capacity = &config.callbacks;
    let window = config.heartbeat_window();
    let every = config.callback_heartbeat;
    let client = store::client(&app.pool).await?;

    let per_sweep = u64::from(capacity.calls_per_second) * window.as_secs().max(1);
    let counting = Instant::now();
    let counted = (per_sweep * COUNTED_SWEEPS).max(u64::try_from(capacity.per_tenant).unwrap_or(0));
    let tenants = store::waiting_callbacks(&client, every, counted).await?;
    run.db += counting.elapsed();
    let waiting: Vec<u64> = tenants.iter().map(|t| u64::try_from(t.waiting).unwrap_or(0)).collect();
    run.waiting = waiting.iter().sum();
    let pace = Pace::new(spread_rate(run.waiting, window, capacity.calls_per_second));
    let failures = std::sync::Mutex::default();
    let how = HeartbeatCalls {
        pace: &pace,
        concurrency: capacity.concurrency,
        cancel_when_gone: config.cancel_when_gone,
        failures: &failures,
    };
    let page = config.sweep_page;
    // A scaled-down window (the tests', a speeded-up run's) waits in proportion.
    let longest_wait = LONGEST_WAIT.min(window / 4).max(Duration::from_millis(10));
    let mut next_due = next_due_of(&tenants);
    loop {
        let alone = *others_done.borrow();
        let elapsed = started.elapsed();
        if elapsed >= HARD_STOP || (alone && elapsed >= window) {
            break;
        }
        if let Some(due_in) = next_due.filter(|due_in| !due_in.is_zero()) {
            // Nothing due now: wait for the next to come due, if it does within the window (or
            // while the other duties run), looking again at least every `longest_wait`.
            if alone && elapsed + due_in > window {
                break;
            }
            let wait = due_in.min(longest_wait);
            if alone {
                tokio::time::sleep(wait).await;
            } else {
                let _ = tokio::time::timeout(wait, others_done.changed()).await;
            }
            next_due = None;
            continue;
        }
        let taking = Instant::now();
        let due = store::take_heartbeats(&client, every, page).await?;
        run.db += taking.elapsed();
        run.pages += 1;
        if due.is_empty() {
            let asking = Instant::now();
            let tenants = store::waiting_callbacks(&client, every, 0).await?;
            run.db += asking.elapsed();
            // None waits: look again in a while only while the other duties run. One due but
            // not taken is a concurrent sweep's (locked): not a reason to ask again at once.
            let due_in = next_due_of(&tenants).unwrap_or(if alone { window } else { longest_wait });
            next_due = Some(due_in.max(NOT_AT_ONCE));
            continue;
        }
        run.owed_late += due.iter().filter(|d| d.owed).count() as u64;
        let beats = callbacks::heartbeat_due(callers, &client, due, &how).await?;
        run.sent += beats.sent;
        run.gone += beats.gone;
        run.failed += beats.failed;
        run.throttled += beats.throttled;
        run.canceled += beats.canceled.len() as u64;
        run.db += beats.db;
        app.publish(beats.canceled).await;
    }
    let looking = Instant::now();
    let left = store::waiting_callbacks(&client, every, 0).await?;
    run.db += looking.elapsed();
    // Short when a callback waited past its due time for longer than the duty ever waits between
    // looks: one that came due in the window's last moments is the next sweep's, not a shortage.
    run.cut_short = left.iter().any(|tenant| tenant.overdue > longest_wait);
    let keeping = Keeping { every, interval: config.sweep_interval, window };
    run.seconds_kept = (run.waiting > 0).then(|| {
        if run.cut_short {
            keeping.when_short(&waiting, run.sent)
        } else {
            keeping.when_caught_up()
        }
    });
    if run.cut_short {
        tracing::warn!(
            sent = run.sent,
            waiting = run.waiting,
            throttled = run.throttled,
            calls_per_second = pace.per_second(),
            heartbeat_seconds_kept = run.seconds_kept.map(|kept| kept.as_secs()),
            "callbacks still due at the end of the heartbeat window: more callbacks wait than the sweep can heartbeat (AITASK_CALLBACK_CALLS_PER_SECOND x the window, or what AWS's quota leaves)"
        );
        Document::new(&[&[]]).metric("CallbackHeartbeatsCutShort", Unit::Count, 1.0).emit();
    }
    Ok(run)
}

/// How long until the first of these tenants' callbacks is due (none when nothing waits).
fn next_due_of(tenants: &[WaitingCallbacks]) -> Option<Duration> {
    tenants.iter().map(|tenant| tenant.due_in).min()
}
