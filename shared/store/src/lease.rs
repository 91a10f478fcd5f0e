//! A worker's side of a task (`sql/lease/`): claim an attempt, check in on it (cancellation,
//! heartbeat), and give it back for a retry. Every statement after the claim is fenced on the [`Lease`].

use uuid::Uuid;

use aitasks_contracts::ErrorCode;

use crate::model::{Claim, Lease, LeaseCheck, Task, TaskStatus};
use crate::pool::GenericClient;
use crate::queries::{CHECK, CLAIM, CLAIM_MISS, HEARTBEAT, REQUEUE};
use crate::settle::end_canceled;
use crate::sql::truncate_message;
use crate::{Fenced, StoreResult};

/// Claim the next attempt of a queued task. One round trip when it succeeds. Only a `queued`
/// task whose cancel was not requested and whose attempt budget is not spent can be claimed;
/// a duplicate delivery of a running or terminal task claims nothing.
pub async fn claim(client: &impl GenericClient, task_id: Uuid) -> StoreResult<Claim> {
    let statement = client.prepare_cached(CLAIM.text()).await?;
    if let Some(row) = client.query_opt(&statement, &CLAIM.bind(&[("task_id", &task_id)])?).await? {
        return Ok(Claim::Claimed(Task::from_row(&row)?));
    }
    let statement = client.prepare_cached(CLAIM_MISS.text()).await?;
    let Some(row) = client.query_opt(&statement, &CLAIM_MISS.bind(&[("task_id", &task_id)])?).await? else {
        return Ok(Claim::Missing);
    };
    let status = crate::model::task_status(row.try_get("status")?)?;
    let cancel_requested: bool = row.try_get("cancel_requested")?;
    if status == TaskStatus::Queued && cancel_requested {
        if let Fenced::Written(settled) = end_canceled(client, task_id).await? {
            return Ok(Claim::Canceled(*settled));
        }
    }
    Ok(Claim::NotClaimable(status))
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

/// Put a running task back in the queue after a retryable failure, keeping the error for the
/// record. Returns false when the lease was lost, a cancel was requested (settle it with
/// [`end_canceled`]) or the attempt budget is spent (fail it instead).
pub async fn requeue_attempt(
    client: &impl GenericClient,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(REQUEUE.text()).await?;
    let (code, message) = (code.as_str(), truncate_message(message));
    let params = REQUEUE.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("error_code", &code),
        ("error_message", &message),
    ])?;
    let changed = client.execute(&statement, &params).await?;
    Ok(changed == 1)
}
