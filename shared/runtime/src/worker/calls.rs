//! One attempt's provider calls: the task's profile, then its fallbacks in order while the one
//! before failed with a retryable error, each behind its provider-side limits (`limits` in
//! `AITASK_MODELS`, counted in Postgres so every worker instance respects one limit). A profile
//! at its limit is passed over for the next; when every one is and none was called, the attempt
//! is throttled and the task goes back unworked. An attempt that made a call is counted.

use std::time::Duration;

use aitasks_contracts::AiRequest;
use aitasks_providers::{CancellationToken, Completion, ModelProfile, Provider, ProviderError};

use super::permit::{MinuteGate, Permit, SLOT_WAIT};
use crate::app::App;

/// How an attempt's calls ended.
pub(super) enum Calls {
    Done(Result<Completion, ProviderError>),
    /// Every profile was at a limit; try again after this long.
    Throttled(Duration),
}

pub(super) async fn run<P: Provider>(
    app: &App<P>,
    chain: &[&ModelProfile],
    request: &AiRequest,
    app_id: &str,
    cancel: &CancellationToken,
) -> Calls {
    let mut throttled: Option<Duration> = None;
    // The last failure of a profile that was called: once a call was made, the attempt counts,
    // whatever the rest of the chain does (a later profile at its limit must not give the task
    // back uncounted, or a failing profile would be called forever).
    let mut failed: Option<ProviderError> = None;
    let mut profiles = chain.iter().peekable();
    while let Some(profile) = profiles.next() {
        let mut at_limit = |wait: Duration| {
            tracing::info!(profile = %profile.id, wait_ms = wait.as_millis() as u64, "the profile is at its provider limit");
            throttled = Some(throttled.map_or(wait, |w| w.min(wait)));
        };
        let permit = match Permit::enter(app, profile, app_id).await {
            Ok(permit) => permit,
            Err(wait) => {
                at_limit(wait);
                continue;
            }
        };
        let result = match MinuteGate::of(app, profile, app_id, &permit) {
            Some(gate) => app.provider.run_gated(profile, request, &gate, cancel).await,
            None => app.provider.run(profile, request, cancel).await,
        };
        permit.leave().await;
        match result {
            Err(ProviderError::AtLimit { wait }) => at_limit(wait),
            Err(error) if error.is_retryable() && profiles.peek().is_some() => {
                let next = profiles.peek().map(|p| p.id.as_str()).unwrap_or_default();
                tracing::warn!(profile = %profile.id, fallback = next, error = %error, "the profile failed; trying its fallback");
                failed = Some(error);
            }
            result => return Calls::Done(result),
        }
    }
    match failed {
        Some(error) => Calls::Done(Err(error)),
        None => Calls::Throttled(throttled.unwrap_or(SLOT_WAIT)),
    }
}
