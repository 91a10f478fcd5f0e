//! A worker's lease on its tasks (`sql/lease/`): claim an attempt (which hands out the [`Lease`]
//! every later write is fenced on), and check in on it while it runs (cancellation, heartbeat).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::{Claim, Fenced, Lease, LeaseCheck, Task, TaskStatus};
use crate::pool::GenericClient;
use crate::queries::{CHECK, CLAIM_BY, CLAIM_BY_MISSES, GIVE_BACK_CLAIMS, HEARTBEAT};
use crate::rows::task_status;
use crate::settle::end_canceled;

/// A claim's mark on the rows it takes, and the time after which it takes none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimMark {
    pub token: Uuid,
    /// No row is taken at or after this (the database's clock).
    pub by: DateTime<Utc>,
}

/// Claim the next attempt of the tasks an invocation's messages name (one or many), answering
/// record by record in order. Only a `queued` task whose cancel was not requested and whose
/// attempt budget is not spent is claimed; a duplicate delivery of a running or terminal task
/// claims nothing. One round trip when every task is claimed, two otherwise (plus one per task
/// whose cancel was requested before it started: that claim settles it `canceled`). A task
/// named twice is claimed for its first record; a later record of it is a duplicate delivery.
///
/// No row is taken at or after `mark.by`, and what is taken is marked with `mark.token`, so that
/// a worker that stopped waiting can give it back with [`give_back_claims`].
pub async fn claim_by(
    client: &impl GenericClient,
    task_ids: &[Uuid],
    mark: &ClaimMark,
) -> StoreResult<Vec<Claim>> {
    let mut distinct = task_ids.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let statement = client.prepare_cached(CLAIM_BY.text()).await?;
    let params =
        CLAIM_BY.bind(&[("task_ids", &distinct), ("claim_token", &mark.token), ("claim_by", &mark.by)])?;
    let rows = client.query(&statement, &params).await?;
    let mut first: HashMap<Uuid, Claim> = HashMap::with_capacity(distinct.len());
    for row in &rows {
        let mut task = Task::from_row(row)?;
        task.unheld_at = row.try_get("unheld_at")?;
        let holds: Option<serde_json::Value> = row.try_get("active_holds")?;
        if let Some(holds) = holds {
            task.holds = serde_json::from_value(holds)
                .map_err(|error| crate::StoreError::Corrupt(format!("a claim's holds: {error}")))?;
        }
        first.insert(task.id, Claim::Claimed(task));
    }
    let missed: Vec<Uuid> = distinct.iter().filter(|id| !first.contains_key(id)).copied().collect();
    if !missed.is_empty() {
        let statement = client.prepare_cached(CLAIM_BY_MISSES.text()).await?;
        for row in client.query(&statement, &CLAIM_BY_MISSES.bind(&[("task_ids", &missed)])?).await? {
            let id: Uuid = row.try_get("id")?;
            let status = task_status(row.try_get("status")?)?;
            let cancel_requested: bool = row.try_get("cancel_requested")?;
            let mut claim = Claim::NotClaimable(status);
            if status == TaskStatus::Queued && cancel_requested {
                if let Fenced::Written(settled) = end_canceled(client, id).await? {
                    claim = Claim::Canceled(*settled);
                }
            } else if status == TaskStatus::Queued {
                claim = Claim::Busy;
            }
            first.insert(id, claim);
        }
    }
    let mut repeats: HashMap<Uuid, TaskStatus> = HashMap::new();
    Ok(task_ids
        .iter()
        .map(|id| match first.remove(id) {
            Some(claim) => {
                let status = match &claim {
                    Claim::Claimed(_) => Some(TaskStatus::Running),
                    Claim::Canceled(_) => Some(TaskStatus::Canceled),
                    Claim::NotClaimable(status) => Some(*status),
                    Claim::Busy => Some(TaskStatus::Queued),
                    Claim::Missing => None,
                };
                if let Some(status) = status {
                    repeats.insert(*id, status);
                }
                claim
            }
            None => repeats.get(id).map_or(Claim::Missing, |status| Claim::NotClaimable(*status)),
        })
        .collect())
}

/// Give back, uncounted, what the claim marked `token` took of `task_ids` (its worker stopped
/// waiting for the answer). How many went back.
pub async fn give_back_claims(
    client: &impl GenericClient,
    task_ids: &[Uuid],
    token: Uuid,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(GIVE_BACK_CLAIMS.text()).await?;
    let params = GIVE_BACK_CLAIMS.bind(&[("task_ids", &task_ids), ("claim_token", &token)])?;
    Ok(client.execute(&statement, &params).await?)
}

/// Check for cancellation (a read; run every cancel poll). One round trip.
pub async fn check(client: &impl GenericClient, lease: Lease) -> StoreResult<LeaseCheck> {
    let statement = client.prepare_cached(CHECK.text()).await?;
    let row = client
        .query_opt(&statement, &CHECK.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?)
        .await?;
    lease_check(row)
}

/// Refresh the heartbeat and check for cancellation in the same statement. One round trip.
pub async fn heartbeat(client: &impl GenericClient, lease: Lease) -> StoreResult<LeaseCheck> {
    let statement = client.prepare_cached(HEARTBEAT.text()).await?;
    let row = client
        .query_opt(&statement, &HEARTBEAT.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?)
        .await?;
    lease_check(row)
}

fn lease_check(row: Option<tokio_postgres::Row>) -> StoreResult<LeaseCheck> {
    Ok(match row {
        None => LeaseCheck::Lost,
        Some(row) if row.try_get::<_, bool>("cancel_requested")? => LeaseCheck::CancelRequested,
        Some(_) => LeaseCheck::Active,
    })
}
