//! What process-task's attempts emit: one document per settlement, per retry and per claim
//! given back at a provider limit.

use std::time::Duration;

use aitasks_providers::Usage;

use super::{Document, Unit};

/// A settlement's figures.
pub(crate) struct Settlement<'a> {
    pub(crate) status: &'a str,
    pub(crate) error_code: Option<&'a str>,
    pub(crate) model_id: &'a str,
    pub(crate) attempts: i32,
    pub(crate) worked: Duration,
    pub(crate) usage: Option<&'a Usage>,
    /// At the profile's list prices, when it has them.
    pub(crate) cost_usd: Option<f64>,
}

/// `Settlements` by outcome, error code and model profile, with the attempt's figures.
pub(crate) fn settled(settlement: &Settlement<'_>) {
    let usage = settlement.usage;
    Document::new(&[&["Outcome"], &["Outcome", "ErrorCode"], &["ModelId"]])
        .dimension("Outcome", settlement.status)
        .dimension("ErrorCode", settlement.error_code.unwrap_or("none"))
        .dimension("ModelId", settlement.model_id)
        .metric("Settlements", Unit::Count, 1.0)
        .metric("Attempts", Unit::Count, f64::from(settlement.attempts))
        .metric("WorkedMs", Unit::Milliseconds, millis(settlement.worked))
        .metric_opt("ProviderLatencyMs", Unit::Milliseconds, usage.map(|u| u.latency_ms as f64))
        .metric_opt("InputTokens", Unit::Count, usage.map(|u| u.input_tokens as f64))
        .metric_opt("OutputTokens", Unit::Count, usage.map(|u| u.output_tokens as f64))
        .metric_opt("EstimatedCostUSD", Unit::None, settlement.cost_usd)
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
