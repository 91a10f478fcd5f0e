//! One attempt's provider calls: the task's profile, then its fallbacks in order while the one
//! before failed with a retryable error, each behind its provider-side limits (`limits` in
//! `AITASK_MODELS`, counted in Postgres so every worker instance respects one limit). A profile
//! at its limit is passed over for the next; when every one is and none was called, the attempt
//! is throttled and the task goes back unworked. An attempt that made a call is counted.

use std::time::{Duration, Instant};

use aitasks_contracts::AiRequest;
use aitasks_providers::{
    CallEstimate, CallGate, CancellationToken, Completion, GateFuture, ModelProfile, NoLimits, Passed,
    Provider, ProviderError, Resume,
};

use super::parts::PartTimes;
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
    resume: Option<&Resume>,
    app_id: &str,
    cancel: &CancellationToken,
    parts: &PartTimes,
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
        let entering = Instant::now();
        let entered = Permit::enter(app, profile, app_id).await;
        parts.add_gate(entering.elapsed());
        let permit = match entered {
            Ok(permit) => permit,
            Err(wait) => {
                at_limit(wait);
                continue;
            }
        };
        let minute_gate = MinuteGate::of(app, profile, app_id, &permit);
        let gate = Watched { inner: minute_gate.as_ref().map_or(&NoLimits as &dyn CallGate, |g| g), parts };
        // A batch's answer that failed the checks is repaired by the task's own profile, the one
        // the batch asked; a fallback starts afresh.
        let result = match resume.filter(|_| profile.id == chain[0].id) {
            Some(resume) => app.provider.repair_gated(profile, request, resume, &gate, cancel).await,
            None => app.provider.run_gated(profile, request, &gate, cancel).await,
        };
        let leaving = Instant::now();
        permit.leave().await;
        parts.add_gate(leaving.elapsed());
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

/// A gate that notes whether it let any call through: an attempt stopped before one was made
/// (held at a limit, or in the store checking it) cost nothing, and is not counted.
struct Watched<'a> {
    inner: &'a dyn CallGate,
    /// Notes the calls let through, and the gate's time (its part of the attempt).
    parts: &'a PartTimes,
}

impl CallGate for Watched<'_> {
    fn pass(&self, estimate: CallEstimate) -> GateFuture<'_, Result<Passed, Duration>> {
        Box::pin(async move {
            let passing = Instant::now();
            let passed = self.inner.pass(estimate).await;
            self.parts.add_gate(passing.elapsed());
            if passed.is_ok() {
                self.parts.note_call();
            }
            passed
        })
    }

    fn reconcile_tokens(&self, passed: Passed, used: Option<u64>) -> GateFuture<'_, ()> {
        Box::pin(async move {
            let reconciling = Instant::now();
            self.inner.reconcile_tokens(passed, used).await;
            self.parts.add_gate(reconciling.elapsed());
        })
    }
}
