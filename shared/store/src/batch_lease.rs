//! A worker's side of a whole SQS batch (`sql/batch/`): one statement claims every record's
//! task, one more says why the others were not claimed, and attempts that finish together are
//! completed in one statement with their events. Each item is fenced exactly as the single
//! statements fence it (`lease.rs`, `settle.rs`).

use std::collections::HashMap;

use serde_json::Value;
use uuid::Uuid;

use crate::model::{Claim, Fenced, Lease, PendingEvent, Task, TaskStatus};
use crate::pool::GenericClient;
use crate::queries::{CLAIM_MANY, CLAIM_MISSES, COMPLETE_MANY};
use crate::settle::end_canceled;
use crate::StoreResult;

/// Claim the tasks of a batch's records, answering record by record in order. One round trip
/// when every task is claimed, two otherwise (plus one per task whose cancel was requested
/// before it started: that claim settles it `canceled`). A task named twice is claimed for its
/// first record; a later record of it is a duplicate delivery.
pub async fn claim_many(client: &impl GenericClient, task_ids: &[Uuid]) -> StoreResult<Vec<Claim>> {
    let mut distinct = task_ids.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let statement = client.prepare_cached(CLAIM_MANY.text()).await?;
    let rows = client.query(&statement, &CLAIM_MANY.bind(&[("task_ids", &distinct)])?).await?;
    let mut first: HashMap<Uuid, Claim> = HashMap::with_capacity(distinct.len());
    for row in &rows {
        let task = Task::from_row(row)?;
        first.insert(task.id, Claim::Claimed(task));
    }
    let missed: Vec<Uuid> = distinct.iter().filter(|id| !first.contains_key(id)).copied().collect();
    if !missed.is_empty() {
        let statement = client.prepare_cached(CLAIM_MISSES.text()).await?;
        for row in client.query(&statement, &CLAIM_MISSES.bind(&[("task_ids", &missed)])?).await? {
            let id: Uuid = row.try_get("id")?;
            let status = crate::model::task_status(row.try_get("status")?)?;
            let cancel_requested: bool = row.try_get("cancel_requested")?;
            let mut claim = Claim::NotClaimable(status);
            if status == TaskStatus::Queued && cancel_requested {
                if let Fenced::Written(settled) = end_canceled(client, id).await? {
                    claim = Claim::Canceled(*settled);
                }
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

/// Complete attempts that finished together, each with its validated output and usage: one
/// round trip for all of them, events included. Answers item by item in order, fenced as
/// [`crate::complete_attempt`] is; only unscoped attempts belong here (a scoped one is
/// [`Fenced::Lost`], for the single statement and its admission bookkeeping).
pub async fn complete_many(
    client: &impl GenericClient,
    attempts: &[(Lease, &Value, Option<&Value>)],
) -> StoreResult<Vec<Fenced<PendingEvent>>> {
    let given: Vec<&(Lease, &Value, Option<&Value>)> =
        attempts.iter().filter(|(lease, _, _)| !lease.scoped).collect();
    let task_ids: Vec<Uuid> = given.iter().map(|(lease, _, _)| lease.task_id).collect();
    let numbers: Vec<i32> = given.iter().map(|(lease, _, _)| lease.attempt).collect();
    let outputs: Vec<&Value> = given.iter().map(|(_, output, _)| *output).collect();
    let usages: Vec<Option<&Value>> = given.iter().map(|(_, _, usage)| *usage).collect();
    let mut events: HashMap<Uuid, PendingEvent> = HashMap::new();
    if !given.is_empty() {
        let statement = client.prepare_cached(COMPLETE_MANY.text()).await?;
        let params = COMPLETE_MANY.bind(&[
            ("task_ids", &task_ids),
            ("attempts", &numbers),
            ("outputs", &outputs),
            ("usages", &usages),
        ])?;
        for row in client.query(&statement, &params).await? {
            let event = PendingEvent {
                id: row.try_get("id")?,
                task_id: row.try_get("task_id")?,
                payload: row.try_get("payload")?,
            };
            events.insert(event.task_id, event);
        }
    }
    Ok(attempts
        .iter()
        .map(|(lease, _, _)| events.remove(&lease.task_id).map_or(Fenced::Lost, Fenced::Written))
        .collect())
}
