//! Provider-side limits shared by every worker instance (`sql/provider_limits/`): per-minute
//! calls and tokens per model profile (tokens reserved before a call, reconciled after it), leased
//! concurrency slots, and the line of tenants waiting at a limit, which keeps one tenant's flood
//! from starving another. Only profiles with limits use them.

use std::time::Duration;

use chrono::{DateTime, DurationRound, Utc};
use uuid::Uuid;

use crate::error::StoreResult;
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{
    ENSURE_SLOTS, FREE_SLOT, PRUNE_PROVIDER_LINE, PRUNE_PROVIDER_MINUTES, RECONCILE_TOKENS, START_CALL,
    TAKE_SLOT, WAIT_IN_LINE,
};

/// The UTC minute `at` falls in: the window the per-minute limits count in.
pub fn minute_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(chrono::TimeDelta::minutes(1)).unwrap_or(at)
}

/// A profile's per-minute limits (`None`: no such limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinuteLimits {
    pub requests: Option<i32>,
    pub tokens: Option<i64>,
}

/// One call to count in the minute of `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallToCount<'a> {
    pub profile_id: &'a str,
    pub app_id: &'a str,
    pub at: DateTime<Utc>,
    /// The tokens the call may use (its input estimate and output cap), reserved until its real count is reconciled.
    pub reserve: i64,
    /// The attempt's first call with no slot taken for it: a tenant waiting in line that was
    /// served less recently goes first.
    pub check_line: bool,
}

/// What [`start_call`] did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStart {
    /// Counted: the call may start.
    Counted,
    /// Left for tenants ahead in line, who need what is left of the minute: try again soon.
    HeldBack,
    /// The minute's limit is reached.
    AtLimit,
}

impl CallStart {
    pub fn counted(self) -> bool {
        self == CallStart::Counted
    }
}

/// Count a call against the per-minute limits of its profile, reserving its tokens, when they
/// allow it (and the line does); nothing is counted otherwise.
/// The most tokens one call is counted with. What a provider reports is input: a report of
/// 2^64 - 1 tokens must not push a minute's sum past bigint (every later call of the profile,
/// any tenant's, would fail), and no model reads or writes a trillion tokens in one call.
const MAX_COUNTED_TOKENS: i64 = 1_000_000_000_000;

fn counted_tokens(tokens: i64) -> i64 {
    tokens.clamp(0, MAX_COUNTED_TOKENS)
}

pub async fn start_call(
    client: &impl GenericClient,
    call: &CallToCount<'_>,
    limits: MinuteLimits,
) -> StoreResult<CallStart> {
    let statement = client.prepare_cached(START_CALL.text()).await?;
    let minute = minute_of(call.at);
    let reserve = counted_tokens(call.reserve);
    let params = START_CALL.bind(&[
        ("profile_id", &call.profile_id),
        ("app_id", &call.app_id),
        ("minute", &minute),
        ("reserve", &reserve),
        ("check_line", &call.check_line),
        ("requests_per_minute", &limits.requests),
        ("tokens_per_minute", &limits.tokens),
    ])?;
    let row = client.query_one(&statement, &params).await?;
    Ok(match (row.try_get::<_, Option<i32>>("requests")?, row.try_get::<_, bool>("held_back")?) {
        (Some(_), _) => CallStart::Counted,
        (None, true) => CallStart::HeldBack,
        (None, false) => CallStart::AtLimit,
    })
}

/// Put a finished call's real token count (`used`; `None` when it failed without saying: the
/// reservation stays) in place of the `reserved` tokens it was counted with at `at`.
pub async fn reconcile_tokens(
    client: &impl GenericClient,
    profile_id: &str,
    at: DateTime<Utc>,
    reserved: i64,
    used: Option<i64>,
) -> StoreResult<()> {
    let statement = client.prepare_cached(RECONCILE_TOKENS.text()).await?;
    let minute = minute_of(at);
    let (reserved, used) = (counted_tokens(reserved), used.map(counted_tokens));
    let params = RECONCILE_TOKENS.bind(&[
        ("profile_id", &profile_id),
        ("minute", &minute),
        ("reserved", &reserved),
        ("used", &used),
    ])?;
    client.execute(&statement, &params).await?;
    Ok(())
}

/// A concurrency slot to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotToTake<'a> {
    pub profile_id: &'a str,
    pub app_id: &'a str,
    /// The profile's slots.
    pub slots: i32,
    /// It is freed after this even if nobody frees it.
    pub lease: Duration,
    /// Only the holder frees it ([`free_slot`]).
    pub holder: Uuid,
}

/// Take one of a profile's concurrency slots. `None`: every slot is busy, or another tenant
/// waits in line that was served less recently.
pub async fn take_slot(client: &impl GenericClient, slot: &SlotToTake<'_>) -> StoreResult<Option<i32>> {
    let ensure = client.prepare_cached(ENSURE_SLOTS.text()).await?;
    let params = ENSURE_SLOTS.bind(&[("profile_id", &slot.profile_id), ("slots", &slot.slots)])?;
    client.execute(&ensure, &params).await?;
    let statement = client.prepare_cached(TAKE_SLOT.text()).await?;
    let lease_ms = millis(slot.lease);
    let params = TAKE_SLOT.bind(&[
        ("profile_id", &slot.profile_id),
        ("app_id", &slot.app_id),
        ("slots", &slot.slots),
        ("lease_ms", &lease_ms),
        ("holder", &slot.holder),
    ])?;
    Ok(client.query_opt(&statement, &params).await?.map(|row| row.get::<_, i32>("slot")))
}

/// Give a slot back, as its `holder` (a slot someone else took since frees nothing).
pub async fn free_slot(
    client: &impl GenericClient,
    profile_id: &str,
    slot: i32,
    holder: Uuid,
) -> StoreResult<()> {
    let statement = client.prepare_cached(FREE_SLOT.text()).await?;
    let params = FREE_SLOT.bind(&[("profile_id", &profile_id), ("slot", &slot), ("holder", &holder)])?;
    client.execute(&statement, &params).await?;
    Ok(())
}

/// The tenant was refused at a limit of the profile: it waits in line for `wait`.
pub async fn wait_in_line(
    client: &impl GenericClient,
    profile_id: &str,
    app_id: &str,
    wait: Duration,
) -> StoreResult<()> {
    let statement = client.prepare_cached(WAIT_IN_LINE.text()).await?;
    let wait_ms = millis(wait);
    let params =
        WAIT_IN_LINE.bind(&[("profile_id", &profile_id), ("app_id", &app_id), ("wait_ms", &wait_ms)])?;
    client.execute(&statement, &params).await?;
    Ok(())
}

/// Delete per-minute counts older than an hour, at most `page`.
pub async fn prune_provider_minutes(client: &impl GenericClient, page: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_PROVIDER_MINUTES.text()).await?;
    let page = limit(page);
    Ok(client.execute(&statement, &PRUNE_PROVIDER_MINUTES.bind(&[("page", &page)])?).await?)
}

/// Delete the line's tenants idle for an hour, at most `page`.
pub async fn prune_provider_line(client: &impl GenericClient, page: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_PROVIDER_LINE.text()).await?;
    let page = limit(page);
    Ok(client.execute(&statement, &PRUNE_PROVIDER_LINE.bind(&[("page", &page)])?).await?)
}
