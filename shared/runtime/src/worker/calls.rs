//! One attempt's provider calls: the task's profile, then its fallbacks in order while the one
//! before failed with a retryable error, each behind its provider-side limits (`limits` in
//! `AITASK_MODELS`, counted in Postgres so every worker instance respects one limit). A profile
//! at its limit is passed over for the next; when every one is, the attempt is throttled and
//! the task goes back unworked.

use std::time::Duration;

use aitasks_contracts::AiRequest;
use aitasks_providers::{CancellationToken, Completion, ModelProfile, Provider, ProviderError};

use super::permit::{Permit, SLOT_WAIT};
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
    cancel: &CancellationToken,
) -> Calls {
    let mut throttled: Option<Duration> = None;
    let mut profiles = chain.iter().peekable();
    while let Some(profile) = profiles.next() {
        let permit = match Permit::enter(app, profile).await {
            Ok(permit) => permit,
            Err(wait) => {
                tracing::info!(profile = %profile.id, wait_ms = wait.as_millis() as u64, "the profile is at its provider limit");
                throttled = Some(throttled.map_or(wait, |w| w.min(wait)));
                continue;
            }
        };
        let result = app.provider.run(profile, request, cancel).await;
        let tokens = result.as_ref().map(|c| c.usage.input_tokens + c.usage.output_tokens).unwrap_or(0);
        permit.leave(tokens).await;
        match result {
            Err(error) if error.is_retryable() && profiles.peek().is_some() => {
                let next = profiles.peek().map(|p| p.id.as_str()).unwrap_or_default();
                tracing::warn!(profile = %profile.id, fallback = next, error = %error, "the profile failed; trying its fallback");
            }
            result => return Calls::Done(result),
        }
    }
    Calls::Throttled(throttled.unwrap_or(SLOT_WAIT))
}
