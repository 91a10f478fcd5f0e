//! A batch's answer that failed the checks gets its one repair turn on-demand: the task goes
//! back to the queue with the conversation to continue from, kept for the attempt that repairs
//! it (read at its claim, taken only once that attempt worked). Statements: `sql/repair/`.

use serde_json::Value;

use crate::error::StoreResult;
use crate::model::Lease;
use crate::pool::GenericClient;
use crate::queries::{GIVE_BACK_FOR_REPAIR, READ_REPAIR, TAKE_REPAIR};
use crate::sweep::OwedMessage;

/// A batch's answer failed the checks: the task goes back to the queue with `resume`, what its
/// on-demand repair turn continues from. `None` when the lease (its batch too) is gone. Its
/// message is the caller's to send.
pub async fn give_back_for_repair(
    client: &impl GenericClient,
    lease: Lease,
    resume: &Value,
) -> StoreResult<Option<OwedMessage>> {
    let statement = client.prepare_cached(GIVE_BACK_FOR_REPAIR.text()).await?;
    let params = GIVE_BACK_FOR_REPAIR.bind(&[
        ("batch_id", &lease.batch_id),
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("resume", resume),
    ])?;
    client.query_opt(&statement, &params).await?.as_ref().map(OwedMessage::from_row).transpose()
}

/// What this attempt's repair turn continues from, if a batch left one. Left in place: an
/// attempt given back unworked leaves it to the next claim (the same attempt number); one that
/// worked takes it ([`take_repair`]).
pub async fn read_repair(client: &impl GenericClient, lease: Lease) -> StoreResult<Option<Value>> {
    let statement = client.prepare_cached(READ_REPAIR.text()).await?;
    let params = READ_REPAIR.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?;
    Ok(match client.query_opt(&statement, &params).await? {
        Some(row) => Some(row.try_get("resume")?),
        None => None,
    })
}

/// This attempt's repair turn is spent (the attempt worked): a later attempt starts afresh.
/// False when there was none.
pub async fn take_repair(client: &impl GenericClient, lease: Lease) -> StoreResult<bool> {
    let statement = client.prepare_cached(TAKE_REPAIR.text()).await?;
    let params = TAKE_REPAIR.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?;
    Ok(client.execute(&statement, &params).await? == 1)
}
