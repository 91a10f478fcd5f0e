//! The sweeper's duties, in the order a sweep runs them, each a bounded loop of one statement.

use std::time::{Duration, Instant};

use aitasks_store::{self as store, StoreError, TaskStatus};

use super::pages::{drain, Pages};
use super::{redelivery, stale_running, SweepSummary, HORIZON};
use crate::app::App;
use crate::{batcher, callbacks};

/// Delivered completion events are kept for a day, for inspection.
const DELIVERED_EVENTS_KEPT: Duration = Duration::from_secs(24 * 60 * 60);
/// A message sent this long ago should be counted by the queue (SQS's approximate counts lag
/// up to a minute).
const LOST_AFTER: Duration = Duration::from_secs(60);
/// An undelivered event is hidden from other sweepers this long while one delivers it.
const EVENT_LEASE: Duration = Duration::from_secs(60);
/// The delivery of owed callbacks starts no page after this long: its calls go to AWS (each
/// bounded in time), and the sweep has a minute for everything.
const CALLBACK_WORK: Duration = Duration::from_secs(20);

/// The holds duty starts no page after this long (a release's backlog of parked tasks waits
/// for the next sweep).
const HOLDS_WORK: Duration = Duration::from_secs(10);
/// The operations duty starts no page after this long: a replay page is up to
/// `AITASK_REQUEST_PAGE` creates, and the sweep has a minute for everything.
const OPERATIONS_WORK: Duration = Duration::from_secs(20);

/// The activity fold's pages (rows a statement folds, statements a sweep) and time: 100,000
/// rows a minute at most, far past what a deployment's backends leave (one row a minute per
/// backend, tenant and model that counted), within a share of the sweep's minute.
const ACTIVITY_FOLD_PAGE: usize = 2_000;
const ACTIVITY_FOLD_PAGES: usize = 50;
const ACTIVITY_WORK: Duration = Duration::from_secs(10);

/// One duty of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duty {
    /// Queued tasks past the queue timeout end `failed` (or `canceled`).
    ExpireQueued,
    /// Running tasks whose holder is gone (a stale heartbeat, a batch lease passed) are
    /// requeued after the backoff, or end `failed` (or `canceled`), by the worker's rule.
    ExpireRunning,
    /// The queue holds fewer messages than the store owes: send them again now.
    RestoreLost,
    /// Runs whose cancel request ran out of time: the cancel reaches their remaining tasks.
    /// Before the owed messages are sent: a task canceled here needs none.
    FinishRunCancels,
    /// Running operations (cancel or replay by filter) continue, a page each a turn, round
    /// robin ([`crate::operations`]).
    Operations,
    /// Deferred tasks: batches formed (or their tasks sent on-demand), open batches submitted
    /// and polled, their results settled ([`crate::batcher`]).
    FormBatches,
    LookAtBatches,
    /// Ended batches' copies at the provider (files, batches) are deleted.
    CleanUpBatches,
    /// Messages never sent, or sent long ago without a claim, are (re)sent.
    SendOwed,
    /// Holds (docs/api.md, "Holds"): a released hold's parked tasks the release did not send
    /// again are sent; an automatic hold whose probe did not run for two intervals sends one.
    Holds,
    /// Completion events not marked delivered are delivered (a handed-over event is written
    /// delivered: its task's SQS message stands behind it instead, migrations/V41).
    DeliverEvents,
    /// Owed callbacks not answered yet (a publisher that died, a call to retry) are answered.
    DeliverCallbacks,
    PruneAdmissions,
    PruneDeliveredEvents,
    /// Released application tasks past retention are deleted.
    DeleteRetained,
    PruneQuotaDays,
    /// Per-minute provider counts older than an hour, and the tenants idle in a profile's line.
    PruneProviderMinutes,
    /// Batches that ended over a day ago.
    PruneBatches,
    /// Live output of tasks that ended `AITASK_STREAM_KEEP_SECONDS` ago (docs/api.md, "Live
    /// output").
    PruneOutputs,
    /// The tenant's activity (`GET /v1/activity`, migrations/V40): a closed minute's rows per
    /// backend folded into one, a minute over a day old into its hour, hours over 93 days deleted.
    FoldActivity,
}

/// Every duty, in the order a sweep runs them. The heartbeat of waiting callbacks is not among
/// them: it runs beside them, from the sweep's start (`super::heartbeats`).
pub const DUTIES: [Duty; 20] = [
    Duty::ExpireQueued,
    Duty::ExpireRunning,
    Duty::RestoreLost,
    Duty::FinishRunCancels,
    // Operations: after the run cancels, before the owed messages (a replay whose send failed is
    // owed again and sent by SendOwed).
    Duty::Operations,
    Duty::SendOwed,
    Duty::Holds,
    Duty::DeliverEvents,
    Duty::DeliverCallbacks,
    Duty::PruneAdmissions,
    Duty::PruneDeliveredEvents,
    Duty::DeleteRetained,
    Duty::PruneQuotaDays,
    Duty::PruneProviderMinutes,
    Duty::PruneBatches,
    Duty::PruneOutputs,
    Duty::FoldActivity,
    // Last: their provider calls take the longest, and never delay the other duties.
    Duty::FormBatches,
    Duty::LookAtBatches,
    Duty::CleanUpBatches,
];

impl Duty {
    /// The duty's name in the log and in the `Duty` dimension of `SweepDutyFailures`.
    pub fn name(self) -> &'static str {
        match self {
            Duty::ExpireQueued => "expireQueued",
            Duty::ExpireRunning => "expireRunning",
            Duty::RestoreLost => "restoreLost",
            Duty::FinishRunCancels => "finishRunCancels",
            Duty::Operations => "operations",
            Duty::FormBatches => "formBatches",
            Duty::LookAtBatches => "lookAtBatches",
            Duty::CleanUpBatches => "cleanUpBatches",
            Duty::SendOwed => "sendOwed",
            Duty::Holds => "holds",
            Duty::DeliverEvents => "deliverEvents",
            Duty::DeliverCallbacks => "deliverCallbacks",
            Duty::PruneAdmissions => "pruneAdmissions",
            Duty::PruneDeliveredEvents => "pruneDeliveredEvents",
            Duty::DeleteRetained => "deleteRetained",
            Duty::PruneQuotaDays => "pruneQuotaDays",
            Duty::PruneProviderMinutes => "pruneProviderMinutes",
            Duty::PruneBatches => "pruneBatches",
            Duty::PruneOutputs => "pruneOutputs",
            Duty::FoldActivity => "foldActivity",
        }
    }

    /// Run the duty once, adding what it did to `summary`.
    pub(super) async fn run<P>(self, app: &App<P>, summary: &mut SweepSummary) -> Result<(), StoreError> {
        let config = &app.settings.runtime;
        let mut pages = Pages::new(config.sweep_page, config.sweep_max_pages);
        let page = pages.size();
        let client = store::client(&app.pool).await?;
        let client = &client;
        match self {
            Duty::ExpireQueued => {
                while pages.next() {
                    let settled = store::expire_queued(client, config.queue_timeout, page).await?;
                    pages.took(settled.len());
                    for s in &settled {
                        match s.task.status {
                            TaskStatus::Canceled => summary.stale_canceled += 1,
                            _ => summary.queue_timed_out += 1,
                        }
                    }
                    app.publish(settled.into_iter().map(|s| s.event).collect()).await;
                }
            }
            Duty::ExpireRunning => {
                while pages.next() {
                    let expired =
                        stale_running::expire_stale_running(client, &app.queues, config, page).await?;
                    pages.took(expired.found);
                    summary.stale_requeued += expired.requeued;
                    summary.messages_failed += expired.unsent;
                    for s in &expired.ended {
                        match s.task.status {
                            TaskStatus::Canceled => summary.stale_canceled += 1,
                            _ => summary.stale_interrupted += 1,
                        }
                    }
                    app.publish(expired.ended.into_iter().map(|s| s.event).collect()).await;
                }
            }
            Duty::RestoreLost => {
                // Only messages sent over a minute ago count: SQS's counts lag about that much.
                let restored = redelivery::restore(app, client, LOST_AFTER, pages).await?;
                summary.messages_restored += restored.resent;
                summary.restored_possible_duplicates += restored.possible_duplicates;
                summary.messages_failed += restored.failed;
            }
            // The runs share the duty's one budget of pages: a run whose tasks are not all
            // reached in it is finished by a later sweep.
            Duty::FinishRunCancels => {
                'runs: for run_id in store::pending_run_cancels(client, page).await? {
                    loop {
                        if !pages.next() {
                            break 'runs;
                        }
                        let canceled = store::cancel_run_tasks(client, run_id, page).await?;
                        let touched = canceled.touched();
                        summary.run_tasks_canceled += touched as u64;
                        app.publish(canceled.ended).await;
                        if touched < page {
                            break;
                        }
                    }
                    if store::finish_run_cancel(client, run_id).await? {
                        summary.run_cancels_finished += 1;
                    }
                }
            }
            Duty::Operations => {
                let until = Instant::now() + OPERATIONS_WORK;
                let worked =
                    crate::operations::runner::continue_operations(app, config.sweep_max_pages, until)
                        .await?;
                summary.operation_pages += worked.pages;
                summary.operations_ended += worked.ended;
            }
            Duty::FormBatches => {
                batcher::form_batches(app, page, config.sweep_max_pages, &mut summary.batches).await?;
            }
            Duty::LookAtBatches => batcher::look_at_batches(app, &mut summary.batches).await?,
            Duty::CleanUpBatches => batcher::clean_up_batches(app, page, &mut summary.batches).await?,
            Duty::SendOwed => {
                while pages.next() {
                    let owed =
                        store::take_unsent(client, config.unsent_grace, config.resend_after, page).await?;
                    pages.took(owed.len());
                    let failed = app.queues.send_tasks(&owed).await;
                    if !failed.is_empty() {
                        store::mark_unsent(client, &failed).await?;
                        pages.stalled();
                    }
                    summary.messages_sent += (owed.len() - failed.len()) as u64;
                    summary.messages_failed += failed.len() as u64;
                }
            }
            Duty::Holds => {
                let until = Instant::now() + HOLDS_WORK;
                summary.profiles_held = Some(store::automatic_holds_active(client).await?);
                let (resent, probes) = crate::holds::probe_lapsed_holds(app, client, page, until).await?;
                summary.holds_resent += resent;
                summary.hold_probes += probes;
            }
            Duty::DeliverEvents => {
                while pages.next() {
                    let events = store::take_undelivered_events(client, EVENT_LEASE, page).await?;
                    pages.took(events.len());
                    let delivered = app.send_events_out(&events).await;
                    if delivered.len() < events.len() {
                        pages.stalled();
                    }
                    summary.events_delivered += store::mark_delivered(client, &delivered).await?;
                }
            }
            Duty::DeliverCallbacks => {
                let Some(callers) = &app.callbacks else { return Ok(()) };
                let started = Instant::now();
                while started.elapsed() < CALLBACK_WORK && pages.next() {
                    let owed = store::take_owed_callbacks(client, callbacks::LEASE, page).await?;
                    pages.took(owed.len());
                    let answered = callbacks::answer_owed(callers, client, owed).await?;
                    summary.callbacks_delivered += answered.delivered;
                    summary.callbacks_gone += answered.gone;
                    summary.callback_failures += answered.retried + answered.refused;
                    // Every call of the page failed: the services are down; the next sweep retries.
                    if answered.calls() > 0 && answered.retried == answered.calls() {
                        pages.stalled();
                    }
                }
            }
            Duty::PruneOutputs => {
                let keep = app.settings.runtime.streams.keep;
                summary.outputs_pruned +=
                    drain(pages, |page| store::prune_outputs(client, keep, page)).await?;
            }
            Duty::FoldActivity => {
                // Pages of its own: every backend that counted into a minute leaves a row per
                // tenant and model, many more than a sweep page (docs/lifecycle.md).
                let mut folds = Pages::new(ACTIVITY_FOLD_PAGE, ACTIVITY_FOLD_PAGES);
                let started = Instant::now();
                while started.elapsed() < ACTIVITY_WORK && folds.next() {
                    let folded = store::fold_activity(client, folds.size()).await?;
                    folds.took(usize::try_from(folded).unwrap_or(usize::MAX));
                    summary.activity_rows_folded += folded;
                }
                let old = Pages::new(ACTIVITY_FOLD_PAGE, ACTIVITY_FOLD_PAGES);
                summary.activity_rows_pruned +=
                    drain(old, |page| store::prune_activity(client, page)).await?;
            }
            Duty::PruneAdmissions => {
                summary.admissions_pruned +=
                    drain(pages, |page| store::prune_admissions(client, HORIZON, page)).await?;
            }
            Duty::PruneDeliveredEvents => {
                summary.events_pruned +=
                    drain(pages, |page| store::prune_delivered_events(client, DELIVERED_EVENTS_KEPT, page))
                        .await?;
            }
            Duty::DeleteRetained => {
                summary.released_deleted +=
                    drain(pages, |page| store::delete_retained(client, HORIZON, page)).await?;
            }
            Duty::PruneQuotaDays => {
                summary.quota_days_pruned +=
                    drain(pages, |page| store::prune_quota_days(client, page)).await?;
            }
            Duty::PruneProviderMinutes => {
                summary.provider_minutes_pruned +=
                    drain(pages, |page| store::prune_provider_minutes(client, page)).await?;
                drain(pages, |page| store::prune_provider_line(client, page)).await?;
            }
            Duty::PruneBatches => {
                summary.batches_pruned +=
                    drain(pages, |page| store::prune_ended_batches(client, HORIZON, page)).await?;
            }
        }
        Ok(())
    }
}
