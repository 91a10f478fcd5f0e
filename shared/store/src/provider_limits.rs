//! Provider-side limits shared by every worker instance (`sql/provider_limits/`): per-minute calls and
//! tokens per model profile, and leased concurrency slots. Only profiles with limits use them.

use std::time::Duration;

use chrono::{DateTime, DurationRound, Utc};

use crate::error::StoreResult;
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{ADD_TOKENS, ENSURE_SLOTS, FREE_SLOT, PRUNE_MINUTES, START_CALL, TAKE_SLOT};

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

/// Delete per-minute counts older than an hour, at most `page`.
pub async fn prune_provider_minutes(client: &impl GenericClient, page: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_MINUTES.text()).await?;
    let page = limit(page);
    Ok(client.execute(&statement, &PRUNE_MINUTES.bind(&[("page", &page)])?).await?)
}
