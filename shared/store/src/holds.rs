//! Holds (`sql/holds/`, migrations/V34): a tenant's hold of a profile or a scope, the automatic
//! hold of a failing profile, the tasks parked under them, and their release.
//!
//! The claim reads the active holds that may touch each row it takes (`lease/claim_by.sql`,
//! [`crate::Task::holds`], [`crate::ActiveHold`]), so the healthy path runs no statement of this
//! module; a worker runs
//! [`park`] for a held task, [`note_failure`] for a call that failed on the provider's side and
//! [`reset_failures`] after one the provider answered when it knows the count is not zero.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::Lease;
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{
    AUTOMATIC_HOLDS_ACTIVE, CLAIM_PROBE, GET_HOLD, LIST_HOLDS, NOTE_FAILURE, PARK, PLACE_HOLD, RELEASE_HOLD,
    RESEND_HELD, RESET_FAILURES, TAKE_PROBE, UNFINISHED_HOLDS,
};
use crate::sweep::OwedMessage;

/// What a hold holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldTarget {
    Profile(String),
    Scope(String),
}

/// A hold as the API answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    pub id: Uuid,
    /// The tenant's, or `None`: an automatic hold (every tenant's).
    pub app_id: Option<String>,
    pub target: HoldTarget,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub released_at: Option<DateTime<Utc>>,
    /// `person` or `probe`.
    pub released_by: Option<String>,
}

impl Hold {
    pub fn is_automatic(&self) -> bool {
        self.app_id.is_none()
    }

    fn from_row(row: &tokio_postgres::Row) -> StoreResult<Hold> {
        let profile: Option<String> = row.try_get("profile")?;
        let scope: Option<String> = row.try_get("scope_id")?;
        let target = match (profile, scope) {
            (Some(profile), _) => HoldTarget::Profile(profile),
            (None, Some(scope)) => HoldTarget::Scope(scope),
            (None, None) => return Err(crate::StoreError::Corrupt("a hold without a target".into())),
        };
        Ok(Hold {
            id: row.try_get("id")?,
            app_id: row.try_get("app_id")?,
            target,
            reason: row.try_get("reason")?,
            created_at: row.try_get("created_at")?,
            released_at: row.try_get("released_at")?,
            released_by: row.try_get("released_by")?,
        })
    }
}

/// What [`place_hold`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Placed {
    /// Placed now.
    Created(Hold),
    /// The tenant's active hold of the same target, placed before.
    Existing(Hold),
    /// The tenant has `limit` active holds already.
    AtLimit,
}

/// Place the tenant's hold of `target` (or find its active hold of it), unless it has `limit`
/// active holds. One statement; a second when a concurrent place of the same target won.
pub async fn place_hold(
    client: &impl GenericClient,
    app_id: &str,
    target: &HoldTarget,
    reason: Option<&str>,
    holds_limit: usize,
) -> StoreResult<Placed> {
    let (profile, scope) = match target {
        HoldTarget::Profile(profile) => (Some(profile.as_str()), None),
        HoldTarget::Scope(scope) => (None, Some(scope.as_str())),
    };
    let statement = client.prepare_cached(PLACE_HOLD.text()).await?;
    let holds_limit = limit(holds_limit);
    for _ in 0..2 {
        let hold_id = Uuid::now_v7();
        let params = PLACE_HOLD.bind(&[
            ("hold_id", &hold_id),
            ("app_id", &app_id),
            ("profile", &profile),
            ("scope_id", &scope),
            ("reason", &reason),
            ("limit", &holds_limit),
        ])?;
        let row = client.query_one(&statement, &params).await?;
        match row.try_get::<_, Option<bool>>("created")? {
            Some(true) => return Ok(Placed::Created(Hold::from_row(&row)?)),
            Some(false) => return Ok(Placed::Existing(Hold::from_row(&row)?)),
            // Nothing placed and nothing found: at the limit, or a concurrent place of the same
            // target committed between this statement's look and its insert. Ask again.
            None => continue,
        }
    }
    Ok(Placed::AtLimit)
}

/// The tenant's holds and the automatic ones after `after`, `state` `active`, `released` or both
/// (`None`), in creation order: at most `rows`.
pub async fn list_holds(
    client: &impl GenericClient,
    app_id: &str,
    state: Option<&str>,
    after: Option<Uuid>,
    rows: usize,
) -> StoreResult<Vec<Hold>> {
    let statement = client.prepare_cached(LIST_HOLDS.text()).await?;
    let (after, rows) = (after.unwrap_or(Uuid::nil()), limit(rows));
    let params =
        LIST_HOLDS.bind(&[("app_id", &app_id), ("state", &state), ("after", &after), ("limit", &rows)])?;
    client.query(&statement, &params).await?.iter().map(Hold::from_row).collect()
}

/// One hold the tenant may see (its own, or an automatic one).
pub async fn get_hold(client: &impl GenericClient, app_id: &str, hold_id: Uuid) -> StoreResult<Option<Hold>> {
    let statement = client.prepare_cached(GET_HOLD.text()).await?;
    let row =
        client.query_opt(&statement, &GET_HOLD.bind(&[("hold_id", &hold_id), ("app_id", &app_id)])?).await?;
    row.as_ref().map(Hold::from_row).transpose()
}

/// Release an active hold: the tenant's (`app_id`, by a person) or an automatic one (`None`, by
/// the probe). `None` when it is not active, or not that caller's to release.
pub async fn release_hold(
    client: &impl GenericClient,
    app_id: Option<&str>,
    hold_id: Uuid,
) -> StoreResult<Option<Hold>> {
    let released_by = if app_id.is_some() { "person" } else { "probe" };
    let statement = client.prepare_cached(RELEASE_HOLD.text()).await?;
    let params =
        RELEASE_HOLD.bind(&[("hold_id", &hold_id), ("app_id", &app_id), ("released_by", &released_by)])?;
    let row = client.query_opt(&statement, &params).await?;
    row.as_ref().map(Hold::from_row).transpose()
}

/// A page of a released hold's parked tasks made owed again, in creation order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resent {
    /// The tasks to send, in creation order.
    pub tasks: Vec<OwedMessage>,
    /// Rows the page took off the hold's list (a task no longer parked is only taken off).
    pub taken: usize,
}

/// Take a page of `page` of the released hold's parked tasks; those still parked are owed a
/// message again (the caller sends them; a failed send is unmarked with `mark_unsent`). Fewer
/// than `page` taken: the hold's list is done.
pub async fn resend_held(client: &impl GenericClient, hold_id: Uuid, page: usize) -> StoreResult<Resent> {
    let statement = client.prepare_cached(RESEND_HELD.text()).await?;
    let page = limit(page);
    let rows =
        client.query(&statement, &RESEND_HELD.bind(&[("hold_id", &hold_id), ("page", &page)])?).await?;
    let mut resent = Resent::default();
    for row in &rows {
        resent.taken = usize::try_from(row.try_get::<_, i64>("taken")?).unwrap_or(0);
        if let Some(id) = row.try_get::<_, Option<Uuid>>("id")? {
            resent.tasks.push(OwedMessage { task_id: id, app_id: row.try_get("app_id")? });
        }
    }
    Ok(resent)
}

/// A hold the sweeper looks at: released with parked tasks left to send, or automatic with its
/// probe lease lapsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnfinishedHold {
    pub id: Uuid,
    pub released: bool,
}

pub async fn unfinished_holds(client: &impl GenericClient, page: usize) -> StoreResult<Vec<UnfinishedHold>> {
    let statement = client.prepare_cached(UNFINISHED_HOLDS.text()).await?;
    let page = limit(page);
    let rows = client.query(&statement, &UNFINISHED_HOLDS.bind(&[("page", &page)])?).await?;
    rows.iter()
        .map(|row| Ok(UnfinishedHold { id: row.try_get("id")?, released: row.try_get("released")? }))
        .collect()
}

/// How many profiles are held automatically now.
pub async fn automatic_holds_active(client: &impl GenericClient) -> StoreResult<u64> {
    let statement = client.prepare_cached(AUTOMATIC_HOLDS_ACTIVE.text()).await?;
    let held: i64 =
        client.query_one(&statement, &AUTOMATIC_HOLDS_ACTIVE.bind(&[])?).await?.try_get("held")?;
    Ok(u64::try_from(held).unwrap_or(0))
}

/// Take the free probe lease of the automatic hold `hold_id` for a claimed task that can run on a
/// fallback (for `probe`, two of it): `true` when this task is now the probe.
pub async fn claim_probe(
    client: &impl GenericClient,
    hold_id: Uuid,
    task_id: Uuid,
    probe: std::time::Duration,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(CLAIM_PROBE.text()).await?;
    let probe_ms = millis(probe);
    let params =
        CLAIM_PROBE.bind(&[("hold_id", &hold_id), ("task_id", &task_id), ("probe_ms", &probe_ms)])?;
    Ok(client.query_opt(&statement, &params).await?.is_some())
}

/// Take an automatic hold's lapsed probe lease for `probe` (two of it): its first parked task
/// to send now; `None` when the lease is not free or no task is parked.
pub async fn take_probe(
    client: &impl GenericClient,
    hold_id: Uuid,
    probe: std::time::Duration,
) -> StoreResult<Option<OwedMessage>> {
    let statement = client.prepare_cached(TAKE_PROBE.text()).await?;
    let probe_ms = millis(probe);
    let row = client
        .query_opt(&statement, &TAKE_PROBE.bind(&[("hold_id", &hold_id), ("probe_ms", &probe_ms)])?)
        .await?;
    Ok(match row {
        Some(row) => {
            let task: Option<Uuid> = row.try_get("probe_task")?;
            let app: Option<String> = row.try_get("app_id")?;
            task.zip(app).map(|(task_id, app_id)| OwedMessage { task_id, app_id })
        }
        None => None,
    })
}

/// What [`park`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parked {
    /// Parked under the holds still active; `probe`: it holds an automatic hold's probe lease,
    /// and its message is to be sent after the probe interval.
    Parked { probe: bool },
    /// No hold of `hold_ids` is active any more: given back owed (its message is to be sent).
    GivenBack,
    /// The fence failed (the lease is gone, or a cancel was requested).
    Lost,
}

/// Park the claimed task of `lease` under the holds `hold_ids` (those still active), its attempt
/// uncounted; under an automatic hold, take its probe lease for two `probe` intervals when free.
pub async fn park(
    client: &impl GenericClient,
    lease: Lease,
    hold_ids: &[Uuid],
    probe: std::time::Duration,
) -> StoreResult<Parked> {
    let statement = client.prepare_cached(PARK.text()).await?;
    let probe_ms = millis(probe);
    let params = PARK.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("batch_id", &lease.batch_id),
        ("hold_ids", &hold_ids),
        ("probe_ms", &probe_ms),
    ])?;
    Ok(match client.query_opt(&statement, &params).await? {
        None => Parked::Lost,
        Some(row) if row.try_get::<_, bool>("parked")? => Parked::Parked { probe: row.try_get("probe")? },
        Some(_) => Parked::GivenBack,
    })
}

/// What [`note_failure`] learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureNoted {
    /// The profile's count of failures in a row now.
    pub failures: i32,
    /// The automatic hold this failure placed.
    pub placed: Option<Uuid>,
    /// The profile's active automatic hold (placed now or before).
    pub held: Option<Uuid>,
}

/// Count a provider-side failure of `task_id`'s call at `profile`; at `after_failures` different
/// tasks in a row, hold the profile for every tenant, with `reason`.
pub async fn note_failure(
    client: &impl GenericClient,
    profile: &str,
    task_id: Uuid,
    after_failures: i32,
    reason: &str,
) -> StoreResult<FailureNoted> {
    let statement = client.prepare_cached(NOTE_FAILURE.text()).await?;
    let hold_id = Uuid::now_v7();
    let params = NOTE_FAILURE.bind(&[
        ("profile", &profile),
        ("task_id", &task_id),
        ("hold_id", &hold_id),
        ("reason", &reason),
        ("after_failures", &after_failures),
    ])?;
    let row = client.query_one(&statement, &params).await?;
    Ok(FailureNoted {
        failures: row.try_get::<_, Option<i32>>("failures")?.unwrap_or(0),
        placed: row.try_get("placed")?,
        held: row.try_get("held")?,
    })
}

/// The provider answered a call at `profile`: its count of failures in a row starts again.
pub async fn reset_failures(client: &impl GenericClient, profile: &str) -> StoreResult<()> {
    let statement = client.prepare_cached(RESET_FAILURES.text()).await?;
    client.execute(&statement, &RESET_FAILURES.bind(&[("profile", &profile)])?).await?;
    Ok(())
}
