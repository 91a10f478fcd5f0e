//! Provider-side limits shared by every worker instance (`sql/limits/`): per-minute calls and
//! tokens per model profile, and leased concurrency slots. Only profiles with limits use them.

use std::time::Duration;

use chrono::{DateTime, DurationRound, Utc};

use crate::pool::GenericClient;
use crate::queries::{
    ADD_TOKENS, ENSURE_SLOTS, FREE_SLOT, LIMITS_PRUNE_USAGE, RELEASE_CLAIM, START_CALL, TAKE_SLOT,
};
use crate::sql::{limit, millis};
use crate::{Lease, StoreResult};

/// The UTC minute `at` falls in: the window the per-minute limits count in.
pub fn minute_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(chrono::TimeDelta::minutes(1)).unwrap_or(at)
}

/// Count a call against the per-minute limits of `profile_id` in the minute of `at`, when they
/// allow it. `false`: a limit is reached for that minute (nothing was counted).
pub async fn start_call(
    client: &impl GenericClient,
    profile_id: &str,
    at: DateTime<Utc>,
    requests_per_minute: Option<i32>,
    tokens_per_minute: Option<i64>,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(START_CALL.text()).await?;
    let minute = minute_of(at);
    let params = START_CALL.bind(&[
        ("profile_id", &profile_id),
        ("minute", &minute),
        ("requests_per_minute", &requests_per_minute),
        ("tokens_per_minute", &tokens_per_minute),
    ])?;
    Ok(client.query_opt(&statement, &params).await?.is_some())
}

/// Add a finished call's tokens to the minute it started in (`at`, as given to [`start_call`]).
pub async fn add_tokens(
    client: &impl GenericClient,
    profile_id: &str,
    at: DateTime<Utc>,
    tokens: i64,
) -> StoreResult<()> {
    let statement = client.prepare_cached(ADD_TOKENS.text()).await?;
    let minute = minute_of(at);
    let params = ADD_TOKENS.bind(&[("profile_id", &profile_id), ("minute", &minute), ("tokens", &tokens)])?;
    client.execute(&statement, &params).await?;
    Ok(())
}

/// Take one of the `slots` concurrency slots of `profile_id` for at most `lease` (it is freed
/// then even if nobody gives it back). `None`: every slot is busy.
pub async fn take_slot(
    client: &impl GenericClient,
    profile_id: &str,
    slots: i32,
    lease: Duration,
) -> StoreResult<Option<i32>> {
    let ensure = client.prepare_cached(ENSURE_SLOTS.text()).await?;
    client.execute(&ensure, &ENSURE_SLOTS.bind(&[("profile_id", &profile_id), ("slots", &slots)])?).await?;
    let statement = client.prepare_cached(TAKE_SLOT.text()).await?;
    let lease_ms = millis(lease);
    let params =
        TAKE_SLOT.bind(&[("profile_id", &profile_id), ("slots", &slots), ("lease_ms", &lease_ms)])?;
    Ok(client.query_opt(&statement, &params).await?.map(|row| row.get::<_, i32>("slot")))
}

/// Give a slot back.
pub async fn free_slot(client: &impl GenericClient, profile_id: &str, slot: i32) -> StoreResult<()> {
    let statement = client.prepare_cached(FREE_SLOT.text()).await?;
    client.execute(&statement, &FREE_SLOT.bind(&[("profile_id", &profile_id), ("slot", &slot)])?).await?;
    Ok(())
}

/// Delete per-minute counts older than an hour, at most `batch`.
pub async fn prune_provider_usage(client: &impl GenericClient, batch: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(LIMITS_PRUNE_USAGE.text()).await?;
    let batch = limit(batch);
    Ok(client.execute(&statement, &LIMITS_PRUNE_USAGE.bind(&[("batch", &batch)])?).await?)
}

/// Give a claimed task back unworked, its attempt uncounted. `false` when the lease is gone or
/// a cancel was requested (settle that instead).
pub async fn release_claim(client: &impl GenericClient, lease: Lease) -> StoreResult<bool> {
    let statement = client.prepare_cached(RELEASE_CLAIM.text()).await?;
    let params = RELEASE_CLAIM.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?;
    Ok(client.execute(&statement, &params).await? == 1)
}
