//! Carrying out what an ended attempt writes ([`super::decision::decide`]): a success through
//! the batch's [`Settler`] (or its own statement for a scoped task), a retry, a failure, a
//! requested cancel, a claim given back; then the settlement's one log line, its metrics and
//! its completion event.

use std::time::Duration;

use aitasks_store::{self as store, Fenced, StoreError, Task};

use super::decision::{decide, Decision, Ending};
use super::delivery::Outcome;
use super::jitter::random_fraction;
use super::settler::Settler;
use crate::app::App;
use crate::metrics::{self, Settlement};

pub(super) async fn settle<P>(
    app: &App<P>,
    task: &Task,
    ending: Ending,
    worked: Duration,
    settler: &Settler,
) -> Result<Outcome, StoreError> {
    let lease = task.lease();
    // The cause goes to the log (the task stores a stable sentence); a provider's own words are
    // in it only as their size and hash (`ProviderError`'s Display), so it never quotes a prompt.
    let cause = match &ending {
        Ending::Finished(Err(error)) => Some(error.to_string()),
        Ending::Unexpected(detail) => Some(detail.clone()),
        _ => None,
    };
    let decision =
        decide(&ending, task.attempts, task.max_attempts, &app.settings.runtime, random_fraction());
    // A success the settler takes is written, and its event published, with the batch's.
    let decision = match decision {
        Decision::Complete(completion) if !lease.scoped => {
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
        decision => decision,
    };
    let client = store::client(&app.pool).await?;
    let finished = match decision {
        Decision::Complete(completion) => {
            let usage = serde_json::to_value(&completion.usage).ok();
            store::complete_attempt(&client, lease, &completion.output, usage.as_ref()).await?
        }
        Decision::Requeue { code, message, delay } => {
            if store::requeue_attempt(&client, lease, code, &message).await? {
                metrics::retried(code.as_str(), worked);
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
        Decision::GiveBack { delay } => {
            if store::give_back(&client, lease).await? {
                metrics::gave_back(&task.model_id);
                tracing::info!(
                    model_id = %task.model_id,
                    retry_in_ms = delay.as_millis() as u64,
                    "given back: every profile is at its provider limit; the attempt is not counted"
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
    let prices = app.profiles.resolve(&task.model_id).ok().and_then(|profile| profile.prices);
    metrics::settled(&Settlement {
        status,
        error_code,
        model_id: &task.model_id,
        attempts: task.attempts,
        worked,
        usage,
        cost_usd: prices.zip(usage).map(|(prices, u)| prices.cost(u.input_tokens, u.output_tokens)),
    });
}
