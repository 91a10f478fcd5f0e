//! A profile's provider-side limits for one call (`limits` in `AITASK_MODELS`, counted in
//! Postgres so that every worker instance respects one limit): the concurrency slot it holds and
//! the minute its call was counted in.

use std::time::Duration;

use aitasks_providers::{ModelProfile, MAX_REPAIR_TURNS};
use aitasks_store as store;
use chrono::{DateTime, Utc};

use super::jitter::jittered;
use crate::app::App;

/// A concurrency slot waits this long, then a random part as long again, before the next try.
pub(super) const SLOT_WAIT: Duration = Duration::from_secs(1);

/// A profile's way past its limits for one call: the concurrency slot it holds and the minute
/// its call was counted in. Dropped without [`Permit::leave`] (a cancel, the deadline), it still
/// gives its slot back.
pub(super) struct Permit {
    pool: Option<store::StorePool>,
    profile_id: String,
    slot: Option<i32>,
    counted_in: Option<DateTime<Utc>>,
}

impl Permit {
    /// `Err(wait)`: the profile is at a limit for about `wait`.
    pub(super) async fn enter<P>(app: &App<P>, profile: &ModelProfile) -> Result<Permit, Duration> {
        let mut permit = Permit { pool: None, profile_id: profile.id.clone(), slot: None, counted_in: None };
        let Some(limits) = profile.limits else { return Ok(permit) };
        permit.pool = Some(app.pool.clone());
        // The limits cannot be checked without the store: wait as for a busy slot (the
        // heartbeat's own failures tell the rest).
        let unavailable = |error: store::StoreError| {
            tracing::warn!(error = %crate::error_chain(&error), "could not check the provider limits");
            jittered(SLOT_WAIT)
        };
        let client = store::client(&app.pool).await.map_err(unavailable)?;
        if let Some(slots) = limits.concurrent {
            // A slot is held at most as long as an attempt's calls can take, then frees itself.
            let timeout = profile.timeout.unwrap_or(app.settings.runtime.provider_timeout);
            let lease = timeout * (MAX_REPAIR_TURNS + 1) + Duration::from_secs(5);
            let slots = i32::try_from(slots).unwrap_or(i32::MAX);
            match store::take_slot(&client, &profile.id, slots, lease).await.map_err(unavailable)? {
                Some(slot) => permit.slot = Some(slot),
                None => return Err(jittered(SLOT_WAIT)),
            }
        }
        if limits.requests_per_minute.is_some() || limits.tokens_per_minute.is_some() {
            let now = Utc::now();
            let rpm = limits.requests_per_minute.and_then(|n| i32::try_from(n).ok());
            let tpm = limits.tokens_per_minute.and_then(|n| i64::try_from(n).ok());
            if !store::start_call(&client, &profile.id, now, rpm, tpm).await.map_err(unavailable)? {
                // Until the next minute, spread over its first second.
                let next = store::minute_of(now) + chrono::TimeDelta::minutes(1);
                let wait = (next - now).to_std().unwrap_or_default();
                return Err(wait + jittered(Duration::from_millis(500)));
            }
            permit.counted_in = Some(now);
        }
        Ok(permit)
    }

    pub(super) async fn leave(mut self, tokens: u64) {
        let Some(pool) = self.pool.take() else { return };
        let Ok(client) = store::client(&pool).await else { return };
        if let Some(slot) = self.slot.take() {
            if let Err(error) = store::free_slot(&client, &self.profile_id, slot).await {
                tracing::warn!(error = %crate::error_chain(&error), "could not free the provider slot; its lease frees it");
            }
        }
        if let Some(at) = self.counted_in {
            let tokens = i64::try_from(tokens).unwrap_or(i64::MAX);
            if let Err(error) = store::add_tokens(&client, &self.profile_id, at, tokens).await {
                tracing::warn!(error = %crate::error_chain(&error), "could not count the call's tokens");
            }
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let (Some(pool), Some(slot)) = (self.pool.take(), self.slot.take()) else { return };
        let profile_id = std::mem::take(&mut self.profile_id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Ok(client) = store::client(&pool).await {
                    let _ = store::free_slot(&client, &profile_id, slot).await;
                }
            });
        }
    }
}
