//! What a settlement tells: its one log line and its metrics, read from the event its ending
//! wrote (the status and error code the task stores).

use std::time::Duration;

use aitasks_store::PendingEvent;

use super::{Attempt, Ending};
use crate::metrics::{self, AttemptFigures, Parts};

/// The one log line and the metrics of a settlement: `attempt` ended as `ending` after `worked`
/// (zero for a batch's answer: the worker's time is what it measures), its ending wrote `event`;
/// `parts` are the worker's own parts of the attempt (none for a batch's answer).
pub(crate) fn record(
    attempt: &Attempt<'_>,
    ending: &Ending,
    worked: Duration,
    event: &PendingEvent,
    parts: Option<&Parts>,
) {
    let cause = cause(ending);
    let cause = cause.as_deref();
    let usage = ending.completion().map(|completion| &completion.usage);
    let status = event.payload["status"].as_str().unwrap_or("unknown");
    let error_code = event.payload["errorCode"].as_str();
    macro_rules! settled {
        ($level:ident) => {
            tracing::$level!(
                kind = %attempt.kind,
                model_id = %attempt.model_id,
                status,
                error_code,
                cause,
                attempts = attempt.lease.attempt,
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
    metrics::settled(&AttemptFigures {
        status,
        error_code,
        model_id: attempt.model_id,
        attempts: attempt.lease.attempt,
        worked,
        usage,
        cost_usd: usage.and_then(|u| u.estimated_cost_usd),
        parts,
    });
}

/// What went wrong, for the log (the task stores a stable sentence). A provider's own words are
/// in it only as their size and hash (`ProviderError`'s Display), so it never quotes a prompt.
pub(super) fn cause(ending: &Ending) -> Option<String> {
    match ending {
        Ending::Finished(Err(error)) => Some(error.to_string()),
        Ending::Unexpected(detail) => Some(detail.clone()),
        _ => None,
    }
}
