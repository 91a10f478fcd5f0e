//! Carrying out what an ended attempt writes ([`super::decision::decide`]): a success through
//! the batch's [`Settler`] (or its own statement for a scoped task), a retry, a failure, a
//! requested cancel, a claim given back; then the settlement's one log line, its metrics and
//! its completion event.

use std::time::{Duration, Instant};

use aitasks_providers::Completion;
use aitasks_store::{self as store, Fenced, PendingEvent, StoreError, Task};

use super::decision::{decide, Decision, Ending};
use super::delivery::Outcome;
use super::jitter::random_fraction;
use super::parts::PartTimes;
use super::settler::Settler;
use crate::app::App;
use crate::metrics::{self, Parts, Settlement};

pub(super) async fn settle<P>(
    app: &App<P>,
    task: &Task,
    ending: Ending,
    worked: Duration,
    settler: &Settler,
    parts: &PartTimes,
) -> Result<Outcome, StoreError> {
    let settling = Instant::now();
    let runtime = &app.settings.runtime;
    let age = super::decision::timeout_age(task.created_at, task.deferred_by, runtime);
    let decision = decide(&ending, task.attempts, task.max_attempts, age, runtime, random_fraction());
    let Decision::Complete(completion) = decision else {
        return carry_out(app, task, &ending, decision, worked, parts, settling).await;
    };
    match store_success(app, task, completion, settler).await {
        Ok(Stored::Written { event, published }) => {
            record_settlement(task, &ending, worked, &event, &parts.settled_in(settling.elapsed()));
            if !published {
                app.publish(vec![event]).await;
            }
            Ok(Outcome::Ack)
        }
        // The fence failed: a cancel may be owed, or the task moved on without us.
        Ok(Stored::Lost) => {
            carry_out(app, task, &ending, Decision::SettleCancel, worked, parts, settling).await
        }
        Err(error) if error.is_unavailable() => Err(error),
        // The store refused to hold the output (a bug, or a value the checker let through): the
        // attempt ends as a runtime error, decided again from that ending, instead of leaving the
        // task running until the sweeper takes it back.
        Err(error) => {
            tracing::error!(error = %crate::error_chain(&error), "the store refused the attempt's output");
            let unstorable =
                Ending::Unexpected(format!("the output could not be stored: {}", crate::error_chain(&error)));
            let decision =
                decide(&unstorable, task.attempts, task.max_attempts, age, runtime, random_fraction());
            carry_out(app, task, &unstorable, decision, worked, parts, settling).await
        }
    }
}

/// What became of a success.
enum Stored {
    /// Stored with its event; `published` when the settler publishes it.
    Written { event: PendingEvent, published: bool },
    /// The fence did not match.
    Lost,
}

/// An unscoped success goes to the batch's settler (group commit); a scoped one has its own
/// statement (its admission bookkeeping).
async fn store_success<P>(
    app: &App<P>,
    task: &Task,
    completion: &Completion,
    settler: &Settler,
) -> Result<Stored, StoreError> {
    let lease = task.lease();
    let usage = serde_json::to_value(&completion.usage).ok();
    let (written, published) = if lease.scoped {
        let client = store::client(&app.pool).await?;
        (store::complete_attempt(&client, lease, &completion.output, usage.as_ref()).await?, false)
    } else {
        (settler.complete(lease, completion.output.clone(), usage).await?, true)
    };
    Ok(match written {
        Fenced::Written(event) => Stored::Written { event, published },
        Fenced::Lost => Stored::Lost,
    })
}

/// Every decision but a success's.
async fn carry_out<P>(
    app: &App<P>,
    task: &Task,
    ending: &Ending,
    decision: Decision<'_>,
    worked: Duration,
    parts: &PartTimes,
    settling: Instant,
) -> Result<Outcome, StoreError> {
    let lease = task.lease();
    let client = store::client(&app.pool).await?;
    let finished = match decision {
        Decision::Requeue { code, message, delay } => {
            if store::requeue_attempt(&client, lease, code, &message).await? {
                metrics::retried(code.as_str(), worked);
                tracing::info!(
                    kind = %task.kind,
                    model_id = %task.model_id,
                    attempts = task.attempts,
                    error_code = code.as_str(),
                    cause = cause(ending).as_deref(),
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
        Decision::SettleCancel | Decision::Complete(_) => Fenced::Lost,
        Decision::GiveBack { delay } => {
            if store::give_back(&client, lease).await? {
                if matches!(ending, Ending::Throttled(_)) {
                    metrics::gave_back(&task.model_id);
                    tracing::info!(
                        model_id = %task.model_id,
                        retry_in_ms = delay.as_millis() as u64,
                        "given back: every profile is at its provider limit; the attempt is not counted"
                    );
                } else {
                    tracing::info!("given back: claimed too late to work before the deadline; the attempt is not counted");
                }
                return Ok(resend_later(app, task, delay).await);
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
        record_settlement(task, ending, worked, &event, &parts.settled_in(settling.elapsed()));
        app.publish(vec![event]).await;
    }
    Ok(Outcome::Ack)
}

/// A task given back comes back in a fresh message delayed by `delay`, and this delivery is
/// acknowledged: a give-back is not a failed receive, so no number of them moves the message to
/// the dead-letter queue. If that send fails, the message itself comes back after the delay.
async fn resend_later<P>(app: &App<P>, task: &Task, delay: Duration) -> Outcome {
    match app.queues.send_task_after(task.id, Some(&crate::queue::message_group(&task.app_id)), delay).await {
        Ok(()) => Outcome::Ack,
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), "could not send the given-back task's message; its delivery comes back instead");
            Outcome::Retry { delay }
        }
    }
}

/// What went wrong, for the log (the task stores a stable sentence). A provider's own words are
/// in it only as their size and hash (`ProviderError`'s Display), so it never quotes a prompt.
fn cause(ending: &Ending) -> Option<String> {
    match ending {
        Ending::Finished(Err(error)) => Some(error.to_string()),
        Ending::Unexpected(detail) => Some(detail.clone()),
        _ => None,
    }
}

/// The one log line and the metrics of a settlement.
fn record_settlement(task: &Task, ending: &Ending, worked: Duration, event: &PendingEvent, parts: &Parts) {
    let cause = cause(ending);
    let cause = cause.as_deref();
    let usage = match ending {
        Ending::Finished(Ok(completion)) => Some(&completion.usage),
        _ => None,
    };
    // The one line per settlement: what ran, how it ended, what it cost.
    let status = event.payload["status"].as_str().unwrap_or("unknown");
    let error_code = event.payload["errorCode"].as_str();
    macro_rules! settled {
        ($level:ident) => {
            tracing::$level!(
                kind = %task.kind,
                model_id = %task.model_id,
                status,
                error_code,
                cause,
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
    if matches!(ending, Ending::Unexpected(_)) {
        settled!(error);
    } else {
        settled!(info);
    }
    metrics::settled(&Settlement {
        status,
        error_code,
        model_id: &task.model_id,
        attempts: task.attempts,
        worked,
        usage,
        cost_usd: usage.and_then(|u| u.estimated_cost_usd),
        parts: Some(parts),
    });
}
