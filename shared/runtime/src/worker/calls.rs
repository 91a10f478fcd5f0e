//! One attempt's provider calls: the task's profile, then its fallbacks in order while the one
//! before failed with a retryable error, each behind its provider-side limits (`limits` in
//! `AITASK_MODELS`, counted in Postgres so every worker instance respects one limit). A profile
//! at its limit is passed over for the next; when every one is and none was called, the attempt
//! is throttled and the task goes back unworked. An attempt that made a call is counted.
//!
//! Holds (docs/api.md, "Holds"): a held profile is passed over like one at its limit, so the
//! fallbacks apply first; a call that fails on the provider's side is counted for the automatic
//! hold (`crate::holds`), and when every profile the attempt called failed so and is held now,
//! the attempt is given back uncounted and the task parked. A call the provider answers resets
//! the profile's count; when it is this task's probe of a held profile, it releases the hold.

use std::time::{Duration, Instant};

use aitasks_contracts::AiRequest;
use aitasks_providers::{
    CallEstimate, CallGate, CancellationToken, Completion, GateFuture, ModelProfile, NoLimits, Passed,
    Provider, ProviderError, Resume, Tap,
};

use super::held::Holds;
use super::parts::PartTimes;
use super::permit::{MinuteGate, Permit, SLOT_WAIT};
use crate::app::App;

/// How an attempt's calls ended.
pub(super) enum Calls {
    Done(Result<Completion, ProviderError>),
    /// Every profile was at a limit; try again after this long.
    Throttled(Duration),
    /// Every profile the attempt called failed on the provider's side and is held now (the
    /// others were held already): park the task under these holds, its attempt uncounted.
    Held(Vec<uuid::Uuid>),
}

/// The attempt's task, as the calls need it.
pub(super) struct CallsOf<'a> {
    pub(super) task_id: uuid::Uuid,
    pub(super) app_id: &'a str,
    /// The held profiles to pass over, with their holds, and the ones this task probes.
    pub(super) holds: &'a Holds,
    /// Told each call's text as it streams (live output).
    pub(super) tap: &'a dyn Tap,
}

pub(super) async fn run<P: Provider>(
    app: &App<P>,
    chain: &[&ModelProfile],
    request: &AiRequest,
    resume: Option<&Resume>,
    task: CallsOf<'_>,
    cancel: &CancellationToken,
    parts: &PartTimes,
) -> Calls {
    let mut throttled: Option<Duration> = None;
    // The last failure of a profile that was called: once a call was made, the attempt counts,
    // whatever the rest of the chain does (a later profile at its limit must not give the task
    // back uncounted, or a failing profile would be called forever).
    let mut failed: Option<ProviderError> = None;
    let app_id = task.app_id;
    let no_holds = Default::default();
    let (passed_over, probes) = match task.holds {
        Holds::Free { passed_over, probes } => (passed_over, probes),
        Holds::Held(_) => (&no_holds, &Default::default()),
    };
    // The holds of the profiles passed over or held by this attempt's own failures, and whether
    // every profile called failed on the provider's side and is held now.
    let mut held: Vec<uuid::Uuid> = Vec::new();
    let mut every_call_held = true;
    let mut profiles = chain.iter().peekable();
    while let Some(profile) = profiles.next() {
        if let Some(holds) = passed_over.get(&profile.id) {
            tracing::info!(profile = %profile.id, "the profile is held; passed over");
            held.extend(holds);
            continue;
        }
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
            Some(resume) => {
                app.provider.repair_gated(profile, request, resume, &gate, task.tap, cancel).await
            }
            None => app.provider.run_gated(profile, request, &gate, task.tap, cancel).await,
        };
        let leaving = Instant::now();
        permit.leave().await;
        parts.add_gate(leaving.elapsed());
        let probe = probes.get(&profile.id).copied();
        match &result {
            Err(ProviderError::AtLimit { .. } | ProviderError::Canceled) => {}
            Err(error) if error.is_provider_side() => {
                if probe.is_some() {
                    crate::metrics::hold_probe(&profile.id);
                }
                match crate::holds::failed_at(app, &profile.id, task.task_id).await {
                    Some(hold) => held.push(hold),
                    None => every_call_held = false,
                }
            }
            // The provider answered (an output, or the task's own error).
            _ => {
                every_call_held = false;
                match probe {
                    Some(hold) => {
                        crate::metrics::hold_probe(&profile.id);
                        crate::holds::release_by_probe(app, &profile.id, hold).await;
                    }
                    None => crate::holds::answered(app, &profile.id).await,
                }
            }
        }
        match result {
            Err(ProviderError::AtLimit { wait }) => at_limit(wait),
            Err(error) if error.is_retryable() && profiles.peek().is_some() => {
                let next = profiles.peek().map(|p| p.id.as_str()).unwrap_or_default();
                tracing::warn!(profile = %profile.id, fallback = next, error = %error, "the profile failed; trying its fallback");
                failed = Some(error);
            }
            Err(error) if error.is_provider_side() && every_call_held => return parked(held),
            result => return Calls::Done(result),
        }
    }
    match failed {
        Some(error) if error.is_provider_side() && every_call_held => parked(held),
        Some(error) => Calls::Done(Err(error)),
        None => Calls::Throttled(throttled.unwrap_or(SLOT_WAIT)),
    }
}

fn parked(mut held: Vec<uuid::Uuid>) -> Calls {
    held.sort_unstable();
    held.dedup();
    Calls::Held(held)
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
