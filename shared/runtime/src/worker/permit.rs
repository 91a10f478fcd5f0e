//! A profile's provider-side limits for one attempt (`limits` in `AITASK_MODELS`, counted in
//! Postgres so that every worker instance respects one limit): the concurrency slot the attempt
//! holds ([`Permit`]), and the per-minute count of each of its calls ([`MinuteGate`], asked by the
//! provider client before every call, repair turns included). A tenant refused at either waits in
//! line, and tenants served more recently leave it the next slot or call (store
//! `provider_limits`): one tenant's flood cannot starve another's tasks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aitasks_providers::{
    CallEstimate, CallGate, GateFuture, ModelProfile, Passed, MAX_REPAIR_GATE_WAIT, MAX_REPAIR_TURNS,
};
use aitasks_store::{self as store, CallStart, CallToCount, MinuteLimits, SlotToTake};
use chrono::Utc;
use uuid::Uuid;

use crate::app::App;
use crate::settle::jitter::jittered;

/// A concurrency slot waits this long, then a random part as long again, before the next try.
pub(super) const SLOT_WAIT: Duration = Duration::from_secs(1);

/// A refused tenant stays in line this much longer than the wait its task was given, so that it
/// is still in line when the task comes back.
const LINE_GRACE: Duration = Duration::from_secs(5);

/// The concurrency slot an attempt holds on a profile, if the profile limits concurrent calls.
/// Dropped without [`Permit::leave`] (a cancel, the deadline), it still gives its slot back.
pub(super) struct Permit {
    pool: Option<store::StorePool>,
    profile_id: String,
    slot: Option<(i32, Uuid)>,
}

impl Permit {
    /// The slot, when the profile has a concurrency limit. `Err(wait)`: every slot is busy (or
    /// left for a tenant ahead in line) for about `wait`.
    pub(super) async fn enter<P>(
        app: &App<P>,
        profile: &ModelProfile,
        app_id: &str,
    ) -> Result<Permit, Duration> {
        let mut permit = Permit { pool: None, profile_id: profile.id.clone(), slot: None };
        let Some(slots) = profile.limits.and_then(|limits| limits.concurrent) else { return Ok(permit) };
        permit.pool = Some(app.pool.clone());
        let client = store::client(&app.pool).await.map_err(unavailable)?;
        // A slot is held at most as long as an attempt's calls can take (the repair turns' wait
        // for the per-minute limits included), then frees itself.
        let timeout = profile.timeout.unwrap_or(app.settings.runtime.provider_timeout);
        let slot = SlotToTake {
            profile_id: &profile.id,
            app_id,
            slots: i32::try_from(slots).unwrap_or(i32::MAX),
            lease: timeout * (MAX_REPAIR_TURNS + 1) + MAX_REPAIR_GATE_WAIT + Duration::from_secs(5),
            holder: Uuid::new_v4(),
        };
        match store::take_slot(&client, &slot).await.map_err(unavailable)? {
            Some(number) => {
                permit.slot = Some((number, slot.holder));
                Ok(permit)
            }
            None => {
                let wait = jittered(SLOT_WAIT);
                wait_in_line(&client, &profile.id, app_id, wait).await;
                Err(wait)
            }
        }
    }

    /// Whether a slot was taken for the attempt (its calls then skip the line).
    pub(super) fn holds_slot(&self) -> bool {
        self.slot.is_some()
    }

    pub(super) async fn leave(mut self) {
        let (Some(pool), Some((slot, holder))) = (self.pool.take(), self.slot.take()) else { return };
        let freed = async {
            let client = store::client(&pool).await?;
            store::free_slot(&client, &self.profile_id, slot, holder).await
        };
        if let Err(error) = freed.await {
            tracing::warn!(error = %crate::error_chain(&error), "could not free the provider slot; its lease frees it");
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let (Some(pool), Some((slot, holder))) = (self.pool.take(), self.slot.take()) else { return };
        let profile_id = std::mem::take(&mut self.profile_id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Ok(client) = store::client(&pool).await {
                    let _ = store::free_slot(&client, &profile_id, slot, holder).await;
                }
            });
        }
    }
}

/// The per-minute limits of a profile, asked before each call of an attempt.
pub(super) struct MinuteGate<'a> {
    pool: &'a store::StorePool,
    profile_id: &'a str,
    app_id: &'a str,
    limits: MinuteLimits,
    /// Until the attempt's first call is through (when no slot was taken for it), a tenant
    /// ahead in line goes first.
    check_line: AtomicBool,
}

impl<'a> MinuteGate<'a> {
    /// The gate, when the profile limits requests or tokens per minute.
    pub(super) fn of<P>(
        app: &'a App<P>,
        profile: &'a ModelProfile,
        app_id: &'a str,
        permit: &Permit,
    ) -> Option<Self> {
        let limits = profile.limits?;
        if limits.requests_per_minute.is_none() && limits.tokens_per_minute.is_none() {
            return None;
        }
        Some(MinuteGate {
            pool: &app.pool,
            profile_id: &profile.id,
            app_id,
            limits: MinuteLimits {
                requests: limits.requests_per_minute.and_then(|n| i32::try_from(n).ok()),
                tokens: limits.tokens_per_minute.and_then(|n| i64::try_from(n).ok()),
            },
            check_line: AtomicBool::new(!permit.holds_slot()),
        })
    }

    async fn pass_now(&self, estimate: CallEstimate) -> Result<Passed, Duration> {
        let client = store::client(self.pool).await.map_err(unavailable)?;
        let now = Utc::now();
        let reserved = estimate.tokens();
        let first_call = self.check_line.load(Ordering::Relaxed);
        let call = CallToCount {
            profile_id: self.profile_id,
            app_id: self.app_id,
            at: now,
            reserve: i64::try_from(reserved).unwrap_or(i64::MAX),
            check_line: first_call,
        };
        let wait = match store::start_call(&client, &call, self.limits).await.map_err(unavailable)? {
            CallStart::Counted => {
                self.check_line.store(false, Ordering::Relaxed);
                return Ok(Passed { counted_at: Some(now), reserved });
            }
            // Left for tenants ahead in line: the minute has room, so soon.
            CallStart::HeldBack => jittered(SLOT_WAIT),
            // Until the next minute, spread over its first second.
            CallStart::AtLimit => {
                let next = store::minute_of(now) + chrono::TimeDelta::minutes(1);
                (next - now).to_std().unwrap_or_default() + jittered(Duration::from_millis(500))
            }
        };
        // Only a first call stands in line: a repair turn already holds the attempt's place
        // (it waits for the limit in the client, and would hold back others for nothing).
        if first_call {
            wait_in_line(&client, self.profile_id, self.app_id, wait).await;
        }
        Err(wait)
    }

    async fn reconcile_now(&self, passed: Passed, used: Option<u64>) {
        let Some(at) = passed.counted_at else { return };
        let reconciled = async {
            let client = store::client(self.pool).await?;
            let reserved = i64::try_from(passed.reserved).unwrap_or(i64::MAX);
            let used = used.map(|u| i64::try_from(u).unwrap_or(i64::MAX));
            store::reconcile_tokens(&client, self.profile_id, at, reserved, used).await
        };
        if let Err(error) = reconciled.await {
            tracing::warn!(error = %crate::error_chain(&error), "could not count the call's tokens; its reservation stays");
        }
    }
}

impl CallGate for MinuteGate<'_> {
    fn pass(&self, estimate: CallEstimate) -> GateFuture<'_, Result<Passed, Duration>> {
        Box::pin(self.pass_now(estimate))
    }

    fn reconcile_tokens(&self, passed: Passed, used: Option<u64>) -> GateFuture<'_, ()> {
        Box::pin(self.reconcile_now(passed, used))
    }
}

/// The limits cannot be checked without the store: wait as for a busy slot (the heartbeat's
/// own failures tell the rest).
fn unavailable(error: store::StoreError) -> Duration {
    tracing::warn!(error = %crate::error_chain(&error), "could not check the provider limits");
    jittered(SLOT_WAIT)
}

async fn wait_in_line(client: &store::Client, profile_id: &str, app_id: &str, wait: Duration) {
    if let Err(error) = store::wait_in_line(client, profile_id, app_id, wait + LINE_GRACE).await {
        tracing::warn!(error = %crate::error_chain(&error), "could not take a place in the provider's line");
    }
}
