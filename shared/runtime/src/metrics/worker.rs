//! What settlements emit: one document per settlement, per retry and per claim given back at
//! a provider limit; and, wherever tasks' endings are published (`App::publish`), one per
//! publication.

use std::time::Duration;

use aitasks_providers::Usage;

use super::{Document, Unit};

/// A settlement's figures.
pub(crate) struct AttemptFigures<'a> {
    pub(crate) status: &'a str,
    pub(crate) error_code: Option<&'a str>,
    pub(crate) model_id: &'a str,
    pub(crate) attempts: i32,
    pub(crate) worked: Duration,
    pub(crate) usage: Option<&'a Usage>,
    /// At the profile's list prices, when it has them.
    pub(crate) cost_usd: Option<f64>,
    /// The worker's own parts of the attempt (none for a provider batch's answer).
    pub(crate) parts: Option<&'a Parts>,
}

/// The worker's own time on an attempt, by part (properties of the settlement's document, in the
/// log line, not metrics: they cost no CloudWatch metric). `make bench` sums them into the
/// worker's overhead a task.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Parts {
    /// The wave's claim statement (a connection taken from the pool included).
    pub(crate) claim: Duration,
    /// The provider limits: the concurrency slot taken and freed, each per-minute check.
    pub(crate) gate: Duration,
    /// The SQS calls that kept the message hidden (with the heartbeats, beside the call).
    pub(crate) visibility: Duration,
    /// From the attempt's end to its settlement stored (the group commit's wait included).
    pub(crate) settle: Duration,
}

/// `Settlements` by outcome, error code and model profile, with the attempt's figures.
pub(crate) fn settled(settlement: &AttemptFigures<'_>) {
    let usage = settlement.usage;
    let mut document = Document::new(&[&["Outcome"], &["Outcome", "ErrorCode"], &["ModelId"]])
        .dimension("Outcome", settlement.status)
        .dimension("ErrorCode", settlement.error_code.unwrap_or("none"))
        .dimension("ModelId", settlement.model_id)
        .metric("Settlements", Unit::Count, 1.0)
        .metric("Attempts", Unit::Count, f64::from(settlement.attempts))
        .metric("WorkedMs", Unit::Milliseconds, millis(settlement.worked))
        .metric_opt("ProviderLatencyMs", Unit::Milliseconds, usage.map(|u| u.latency_ms as f64))
        .metric_opt("InputTokens", Unit::Count, usage.map(|u| u.input_tokens as f64))
        .metric_opt("OutputTokens", Unit::Count, usage.map(|u| u.output_tokens as f64))
        .metric_opt("EstimatedCostUSD", Unit::None, settlement.cost_usd);
    if let Some(parts) = settlement.parts {
        document = document
            .property("ClaimMs", millis(parts.claim))
            .property("GateMs", millis(parts.gate))
            .property("VisibilityMs", millis(parts.visibility))
            .property("SettleMs", millis(parts.settle));
    }
    document.emit();
}

/// `EventsPublished` (the metric's name is the contract's): the completion events of one
/// publication, sent after their transition committed, with the time the sending took
/// (`EventMs`: the events queue and the bus) and what is written after it (`CallbacksMs`: the
/// statement that marks the outbox's events delivered and takes the callbacks the endings made
/// owed, and the answers to those callbacks; none for handed-over events that went out and owe
/// no callback; the hand-back of those that did not go out), as properties.
pub(crate) fn published(events: usize, sending: Duration, marking: Duration) {
    Document::new(&[&[]])
        .metric("EventsPublished", Unit::Count, events as f64)
        .property("EventMs", millis(sending))
        .property("CallbacksMs", millis(marking))
        .emit();
}

/// `Retries` by error code: a retryable failure put the task back in the queue.
pub(crate) fn retried(error_code: &str, worked: Duration) {
    Document::new(&[&["ErrorCode"]])
        .dimension("ErrorCode", error_code)
        .metric("Retries", Unit::Count, 1.0)
        .metric("WorkedMs", Unit::Milliseconds, millis(worked))
        .emit();
}

/// `ProviderThrottled` by model profile: every profile of the chain was at its limit.
pub(crate) fn gave_back(model_id: &str) {
    Document::new(&[&["ModelId"]])
        .dimension("ModelId", model_id)
        .metric("ProviderThrottled", Unit::Count, 1.0)
        .emit();
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
