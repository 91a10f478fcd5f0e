//! One task attempt after its claim (`crate::batch_worker` claims a batch's tasks): execute
//! while watching for cancellation, heartbeating and the deadline → settle. Every write after
//! the claim is fenced on the lease, so a worker that lost its task (requeued, canceled,
//! deleted) writes nothing.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{CancellationToken, Provider};
use aitasks_store::{self as store, Fenced, Lease, LeaseCheck, StoreError, Task};
use futures::FutureExt;
use tokio::time::{Instant, MissedTickBehavior};
use tracing::Instrument;
use uuid::Uuid;

use crate::app::App;
use crate::batch_worker::Settler;
use crate::decision::{decide, Decision, Ending};
use crate::metrics::{Document, Unit};

/// What to do with the SQS message of the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Acknowledge: the task is settled, or this delivery had nothing to do.
    Ack,
    /// Leave the message for another delivery after `delay` (the task was requeued).
    Retry { delay: Duration },
}

/// The SQS message being worked on: its visibility is extended with each heartbeat.
pub struct MessageLease<'a> {
    pub receipt_handle: &'a str,
}

/// The attempt after its claim: execute (the call, the cancel polls, the heartbeats, the
/// deadline) and settle. With a [`Settler`], an unscoped success is completed together with the
/// other attempts of the batch that finish at the same time.
pub(crate) async fn run_claimed<P: Provider>(
    app: &App<P>,
    task: Task,
    message: Option<&MessageLease<'_>>,
    deadline: Instant,
    settler: Option<&Settler>,
) -> Result<Outcome, StoreError> {
    tracing::Span::current().record("attempt", task.attempts);
    // A panic while working (a bug) ends this attempt as a runtime error, like any other
    // failure, instead of taking the whole batch down with it.
    let started = Instant::now();
    let ending = AssertUnwindSafe(execute(app, &task, message, deadline))
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| Ending::Unexpected(format!("panicked: {}", panic_text(panic.as_ref()))));
    settle(app, &task, ending, started.elapsed(), settler).instrument(tracing::info_span!("settle")).await
}

/// The span of one task's attempt: its trace (crate::xray) continues the create's once the claim
/// has read the stored header.
pub(crate) fn task_span(task_id: Uuid) -> tracing::Span {
    tracing::info_span!(
        "task",
        task_id = %task_id,
        attempt = tracing::field::Empty,
        trace_header = tracing::field::Empty
    )
}

/// How long before the invocation's deadline a worker gives up on the store and answers.
pub(crate) const ANSWER_MARGIN: Duration = Duration::from_millis(500);

async fn execute<P: Provider>(
    app: &App<P>,
    task: &Task,
    message: Option<&MessageLease<'_>>,
    deadline: Instant,
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
    // The configuration the task was created with is the one its answer is cached under: if
    // `AITASK_MODELS` changed since, running this profile would store another model's answer
    // under that key.
    if task.model_config_hash.as_ref().is_some_and(|stored| *stored != profile.config_hash()) {
        return Ending::Finished(Err(aitasks_providers::ProviderError::ConfigChanged(task.model_id.clone())));
    }
    let config = &app.settings.runtime;
    let cancel = CancellationToken::new();
    let call = crate::calls::run(app, &chain, &request, &cancel).instrument(tracing::info_span!(
        "provider call",
        kind = %task.kind,
        model_id = %task.model_id
    ));
    let stop_at = deadline.checked_sub(config.deadline_margin).unwrap_or_else(Instant::now);
    // The three run side by side: a check that cannot finish (a dead connection, a lock) delays
    // only the next check, never the call's answer or the deadline.
    let ending = tokio::select! {
        calls = call => match calls {
            crate::calls::Calls::Done(result) => Ending::Finished(result),
            crate::calls::Calls::Throttled(wait) => Ending::Throttled(wait),
        },
        _ = tokio::time::sleep_until(stop_at) => Ending::Deadline,
        ending = watch(app, task.lease(), message) => ending,
    };
    // Dropping the call aborts the HTTP request; the token covers anything it spawned.
    cancel.cancel();
    ending
}

/// Poll for a cancel every `cancel_poll`, heartbeat (row and message) every `heartbeat`; return
/// once the task is to stop. Each check gets at most one heartbeat interval: past that, its
/// connection is abandoned and the next check starts on another.
async fn watch<P>(app: &App<P>, lease: Lease, message: Option<&MessageLease<'_>>) -> Ending {
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
                    if let Some(message) = message {
                        if let Err(error) = app
                            .queues
                            .change_visibility(message.receipt_handle, config.visibility_extension())
                            .await
                        {
                            tracing::warn!(error = %crate::error_chain(&error), "could not extend the message's visibility");
                        }
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

/// The message of a panic payload (`panic!` gives a `&str` or a `String`).
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
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

/// `future`, or an unavailable-store error after `limit`.
async fn within<T>(
    limit: Duration,
    future: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(limit, future).await.unwrap_or_else(|_| Err(timed_out("the database")))
}

pub(crate) fn timed_out(what: &str) -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} did not answer in time"),
    )))
}

async fn settle<P>(
    app: &App<P>,
    task: &Task,
    ending: Ending,
    worked: Duration,
    settler: Option<&Settler>,
) -> Result<Outcome, StoreError> {
    let lease = task.lease();
    // The provider's own words stay in the log (the task stores a stable sentence).
    let cause = match &ending {
        Ending::Finished(Err(error)) => Some(error.to_string()),
        Ending::Unexpected(detail) => Some(detail.clone()),
        _ => None,
    };
    let decision =
        decide(&ending, task.attempts, task.max_attempts, &app.settings.runtime, random_fraction());
    // A success the settler takes is written, and its event published, with the batch's.
    let decision = match (decision, settler) {
        (Decision::Complete(completion), Some(settler)) if !lease.scoped => {
            let usage = serde_json::to_value(&completion.usage).ok();
            match settler.complete(lease, completion.output.clone(), usage).await? {
                Fenced::Written(event) => {
                    record_settlement(app, task, &ending, worked, cause.as_deref(), &event);
                    return Ok(Outcome::Ack);
                }
                // The fence failed: a cancel may be owed (settled below), or the task moved on.
                Fenced::Lost => Decision::SettleCancel,
            }
        }
        (decision, _) => decision,
    };
    let client = store::client(&app.pool).await?;
    let finished = match decision {
        Decision::Complete(completion) => {
            let usage = serde_json::to_value(&completion.usage).ok();
            store::complete_attempt(&client, lease, &completion.output, usage.as_ref()).await?
        }
        Decision::Requeue { code, message, delay } => {
            if store::requeue_attempt(&client, lease, code, &message).await? {
                Document::new(&[&["ErrorCode"]])
                    .dimension("ErrorCode", code.as_str())
                    .metric("Retries", Unit::Count, 1.0)
                    .metric("WorkedMs", Unit::Milliseconds, worked.as_secs_f64() * 1000.0)
                    .emit();
                tracing::info!(
                    kind = %task.kind,
                    model_id = %task.model_id,
                    attempts = task.attempts,
                    error_code = code.as_str(),
                    cause = cause.as_deref(),
                    retry_in_ms = delay.as_millis() as u64,
                    worked_ms = worked.as_millis() as u64,
                    "requeued"
                );
                return Ok(Outcome::Retry { delay });
            }
            Fenced::Lost
        }
        Decision::Fail { code, message } => store::fail_attempt(&client, lease, code, &message).await?,
        // Nothing to write for the attempt itself: the cancel is settled below.
        Decision::SettleCancel => Fenced::Lost,
        Decision::Release { delay } => {
            if store::release_claim(&client, lease).await? {
                Document::new(&[&["ModelId"]])
                    .dimension("ModelId", &task.model_id)
                    .metric("ProviderThrottled", Unit::Count, 1.0)
                    .emit();
                tracing::info!(
                    model_id = %task.model_id,
                    retry_in_ms = delay.as_millis() as u64,
                    "released: every profile is at its provider limit; the attempt is not counted"
                );
                return Ok(Outcome::Retry { delay });
            }
            Fenced::Lost
        }
        Decision::Abandon => {
            tracing::info!("lease lost (requeued, settled or deleted elsewhere); writing nothing");
            return Ok(Outcome::Ack);
        }
    };
    let event = match finished {
        Fenced::Written(event) => Some(event),
        // The fence failed: if a cancel was requested meanwhile, settle it; otherwise the task
        // moved on without us (another attempt owns it, or it is gone).
        Fenced::Lost => match store::end_canceled(&client, task.id).await? {
            Fenced::Written(settled) => Some(settled.event),
            Fenced::Lost => None,
        },
    };
    drop(client);
    if let Some(event) = event {
        record_settlement(app, task, &ending, worked, cause.as_deref(), &event);
        app.publish(vec![event]).await;
    }
    Ok(Outcome::Ack)
}

/// The one log line and the metrics of a settlement.
fn record_settlement<P>(
    app: &App<P>,
    task: &Task,
    ending: &Ending,
    worked: Duration,
    cause: Option<&str>,
    event: &store::PendingEvent,
) {
    let usage = match ending {
        Ending::Finished(Ok(completion)) => Some(&completion.usage),
        _ => None,
    };
    // The one line per settlement: what ran, how it ended, what it cost.
    let error_code = event.payload["errorCode"].as_str();
    let level_error = matches!(ending, Ending::Unexpected(_));
    macro_rules! settled {
        ($level:ident) => {
            tracing::$level!(
                kind = %task.kind,
                model_id = %task.model_id,
                status = event.payload["status"].as_str(),
                error_code,
                cause = cause.as_deref(),
                attempts = task.attempts,
                worked_ms = worked.as_millis() as u64,
                provider_ms = usage.map(|u| u.latency_ms),
                provider_calls = usage.map(|u| u.calls),
                model = usage.map(|u| u.model.as_str()),
                answered_by = usage.and_then(|u| u.profile.as_deref()),
                input_tokens = usage.map(|u| u.input_tokens),
                output_tokens = usage.map(|u| u.output_tokens),
                "settled"
            )
        };
    }
    if level_error {
        settled!(error);
    } else {
        settled!(info);
    }
    let millis = |ms: u64| ms as f64;
    Document::new(&[&["Outcome"], &["Outcome", "ErrorCode"], &["ModelId"]])
        .dimension("Outcome", event.payload["status"].as_str().unwrap_or("unknown"))
        .dimension("ErrorCode", error_code.unwrap_or("none"))
        .dimension("ModelId", &task.model_id)
        .metric("Settlements", Unit::Count, 1.0)
        .metric("Attempts", Unit::Count, f64::from(task.attempts))
        .metric("WorkedMs", Unit::Milliseconds, worked.as_secs_f64() * 1000.0)
        .metric_opt("ProviderLatencyMs", Unit::Milliseconds, usage.map(|u| millis(u.latency_ms)))
        .metric_opt("InputTokens", Unit::Count, usage.map(|u| u.input_tokens as f64))
        .metric_opt("OutputTokens", Unit::Count, usage.map(|u| u.output_tokens as f64))
        .metric_opt("EstimatedCostUSD", Unit::None, estimated_cost(app, &task.model_id, usage))
        .emit();
}

/// The call's cost at the profile's list prices (`prices` in `AITASK_MODELS`), when it has them.
fn estimated_cost<P>(app: &App<P>, model_id: &str, usage: Option<&aitasks_providers::Usage>) -> Option<f64> {
    let prices = app.profiles.resolve(model_id).ok()?.prices?;
    usage.map(|u| prices.cost(u.input_tokens, u.output_tokens))
}

/// A uniformly random number in [0, 1), for the retry's jitter: the low 53 bits of a v4 UUID
/// (all random; its version and variant bits are higher up).
pub(crate) fn random_fraction() -> f64 {
    const BITS: u64 = (1 << 53) - 1;
    (Uuid::new_v4().as_u128() as u64 & BITS) as f64 / (BITS + 1) as f64
}
