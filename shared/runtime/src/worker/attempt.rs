//! One claimed attempt: the provider calls, watched by the cancel polls, the heartbeats (the
//! row and the message) and the deadline, then settled (`settle_attempt`). Every write after
//! the claim is fenced on the lease, so a worker that lost its task (requeued, canceled,
//! deleted) writes nothing.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{CancellationToken, NoTap, Provider, Resume, Tap};
use aitasks_store::{self as store, Lease, LeaseCheck, StoreError, Task};
use futures::FutureExt;
use tokio::time::{Instant, MissedTickBehavior};
use tracing::Instrument;

use super::calls::{self, Calls, CallsOf};
use super::deadline::{timed_out, within};
use super::held::{holds_of, take_free_probes, Holds};
use super::output_writer::LiveOutput;
use super::parts::PartTimes;
use super::queue_message::{Outcome, QueueMessage};
use super::settle_attempt::settle_attempt;
use super::settler::Settler;
use crate::app::App;
use crate::settle::Ending;

/// Run the attempt and settle it. A success goes to the invocation's [`Settler`], to be
/// completed together with the other attempts that finish at the same time.
pub(super) async fn run<P: Provider>(
    app: &App<P>,
    task: Task,
    message: &QueueMessage<'_>,
    deadline: Instant,
    settler: &Settler,
    parts: &PartTimes,
) -> Result<Outcome, StoreError> {
    let receipt = message.receipt;
    tracing::Span::current().record("attempt", task.attempts);
    // A panic while working (a bug) ends this attempt as a runtime error, like any other
    // failure, instead of taking the whole delivery down with it.
    let started = Instant::now();
    let ending =
        AssertUnwindSafe(execute(app, &task, receipt, deadline, parts)).catch_unwind().await.unwrap_or_else(
            |panic| Ending::Unexpected(format!("panicked: {}", crate::panic_text(panic.as_ref()))),
        );
    let hand_over = message.hands_over_events();
    settle_attempt(app, &task, ending, started.elapsed(), settler, parts, hand_over)
        .instrument(tracing::info_span!("settle"))
        .await
}

async fn execute<P: Provider>(
    app: &App<P>,
    task: &Task,
    receipt: &str,
    deadline: Instant,
    parts: &PartTimes,
) -> Ending {
    let request = match AiRequest::parse(&task.request, &Path::root().key("request")) {
        Ok(request) => request,
        Err(problems) => {
            return Ending::Unexpected(format!("the stored request no longer parses: {problems}"))
        }
    };
    let chain = match app.profiles.chain(&task.model_id) {
        Ok(chain) => chain,
        Err(error) => return Ending::Finished(Err(error)),
    };
    let profile = chain[0];
    // Held (its scope, or every profile of its chain): parked, uncounted, before any call.
    let holds = holds_of(task, &chain);
    if let Holds::Held(holds) = holds {
        return Ending::Held(holds);
    }
    // The configuration the task was created with is the one its answer is cached under: if
    // `AITASK_MODELS` changed since, running this profile would store another model's answer
    // under that key.
    if task.model_config_hash.as_ref().is_some_and(|stored| *stored != profile.config_hash()) {
        return Ending::Finished(Err(aitasks_providers::ProviderError::ConfigChanged(task.model_id.clone())));
    }
    let config = &app.settings.runtime;
    let resume = match task.deferred_by {
        Some(_) => repair_of(app, task).await,
        None => None,
    };
    let stop_at = deadline.checked_sub(config.deadline_margin).unwrap_or_else(Instant::now);
    // Claimed too late to call anyone before the stop: give it back uncounted, untried.
    if Instant::now() >= stop_at {
        return Ending::NoTime;
    }
    // Only once the attempt will call: a probe lease taken and not used leaves the profile
    // unprobed for two intervals.
    let holds = take_free_probes(app, task, &chain, holds).await;
    let cancel = CancellationToken::new();
    // Live output: an on-demand attempt on a chain that streams (a deferred task has no stream).
    let live = (task.deferred_by.is_none() && chain.iter().any(|profile| profile.stream))
        .then(|| LiveOutput::start(app.pool.clone(), task.lease(), config.streams));
    let tap = live.as_ref().map_or(&NoTap as &dyn Tap, LiveOutput::tap);
    let of = CallsOf { task_id: task.id, app_id: &task.app_id, holds: &holds, tap };
    let call = calls::run(app, &chain, &request, resume.as_ref(), of, &cancel, parts).instrument(
        tracing::info_span!(
            "provider call",
            kind = %task.kind,
            model_id = %task.model_id
        ),
    );
    // The three run side by side: a check that cannot finish (a dead connection, a lock) delays
    // only the next check, never the call's answer or the deadline.
    let ending = tokio::select! {
        calls = call => match calls {
            Calls::Done(result) => Ending::Finished(result),
            Calls::Throttled(wait) => Ending::Throttled(wait),
            Calls::Held(holds) => Ending::Held(holds),
        },
        // Stopped before any call went out (held at a limit, or waiting on the store to check
        // it): nothing was spent, and the task is given back uncounted.
        _ = tokio::time::sleep_until(stop_at) => match parts.called() {
            true => Ending::Deadline,
            false => Ending::NoTime,
        },
        ending = watch(app, task.lease(), receipt, parts) => ending,
    };
    // Dropping the call aborts the HTTP request; the token covers anything it spawned.
    cancel.cancel();
    // The last of the live output is written before the settlement, so a reader that sees the
    // task end has had the whole of each finished segment.
    if let Some(live) = live {
        live.close(config.deadline_margin).await;
    }
    // A repair is taken only by an attempt that worked: one given back unworked leaves it to the
    // next claim, which has the same attempt number.
    if resume.is_some() && !matches!(ending, Ending::NoTime | Ending::Throttled(_) | Ending::Held(_)) {
        spend_repair(app, task).await;
    }
    ending
}

/// What this attempt's repair turn continues from, when a batch's answer for the task failed the
/// checks (the batcher kept it with the task): read, not taken ([`spend_repair`]). A repair that
/// cannot be read is skipped: the attempt then runs afresh, as any attempt does.
async fn repair_of<P>(app: &App<P>, task: &Task) -> Option<Resume> {
    let read = async {
        let client = store::client(&app.pool).await?;
        store::read_repair(&client, task.lease()).await
    };
    match read.await {
        Ok(Some(value)) => serde_json::from_value(value)
            .inspect_err(|error| tracing::warn!(%error, "a kept repair turn does not read; running the attempt afresh"))
            .ok(),
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), "could not read a kept repair turn; running the attempt afresh");
            None
        }
    }
}

/// The attempt worked on its repair turn: it is taken, so a later attempt starts afresh. One
/// left behind is never read again (it names this attempt's number, and the next counted
/// attempt has another) and goes with its task, so this is tidying, and it runs before the
/// settlement: bounded to a second, it never eats the time the settlement of a paid answer has
/// before the invocation's deadline (`AITASK_DEADLINE_MARGIN_MS`, 5 s).
async fn spend_repair<P>(app: &App<P>, task: &Task) {
    const SPEND_REPAIR_LIMIT: Duration = Duration::from_secs(1);
    let limit = app.settings.runtime.heartbeat.min(SPEND_REPAIR_LIMIT);
    let taken = within(limit, async {
        let client = store::client(&app.pool).await?;
        store::take_repair(&client, task.lease()).await
    });
    if let Err(error) = taken.await {
        tracing::warn!(error = %crate::error_chain(&error), "could not take the spent repair turn; it is left, unread");
    }
}

/// Poll for a cancel every `cancel_poll`, heartbeat (row and message) every `heartbeat`; return
/// once the task is to stop. Each check gets at most one heartbeat interval: past that, its
/// connection is abandoned and the next check starts on another.
async fn watch<P>(app: &App<P>, lease: Lease, receipt: &str, parts: &PartTimes) -> Ending {
    let config = &app.settings.runtime;
    let mut poll = tokio::time::interval_at(Instant::now() + config.cancel_poll, config.cancel_poll);
    poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_heartbeat = Instant::now();
    let check_limit = config.heartbeat.max(config.cancel_poll);
    loop {
        poll.tick().await;
        let heartbeat_due = last_heartbeat.elapsed() >= config.heartbeat;
        match check_in(app, lease, heartbeat_due, check_limit).await {
            Ok(LeaseCheck::Active) => {
                if heartbeat_due {
                    last_heartbeat = Instant::now();
                    let extended = app.queues.change_visibility(receipt, config.visibility_extension()).await;
                    parts.add_visibility(last_heartbeat.elapsed());
                    if let Err(error) = extended {
                        tracing::warn!(error = %crate::error_chain(&error), "could not extend the message's visibility");
                    }
                }
            }
            Ok(LeaseCheck::CancelRequested) => return Ending::CancelRequested,
            Ok(LeaseCheck::Lost) => return Ending::LeaseLost,
            // A blip: keep working. If Postgres stays away the heartbeat goes stale and the
            // sweeper takes the task back; every write here is fenced anyway.
            Err(error) => tracing::warn!(error = %crate::error_chain(&error), "cancel check failed"),
        }
    }
}

async fn check_in<P>(
    app: &App<P>,
    lease: Lease,
    heartbeat: bool,
    limit: Duration,
) -> Result<LeaseCheck, StoreError> {
    let client = within(limit, store::client(&app.pool)).await?;
    let checked = tokio::time::timeout(limit, async {
        if heartbeat {
            store::heartbeat(&client, lease).await
        } else {
            store::check(&client, lease).await
        }
    })
    .await;
    match checked {
        Ok(result) => result,
        Err(_) => {
            // The statement may still be running on that connection: never reuse it.
            drop(store::Client::take(client));
            Err(timed_out("the cancel check"))
        }
    }
}
