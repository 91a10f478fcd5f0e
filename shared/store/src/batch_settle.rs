//! A batch's results settled (`sql/batch/complete*.sql`, `fail.sql`, `requeue.sql`): the
//! settlements of `crate::settle`, fenced on the batch as well as the attempt. A task given back
//! by a batch is queued with the batch's attempt uncounted, so its next attempt (on-demand, or in
//! a newer batch) has the same number: only `batch_id` tells the batch that holds the task now
//! from one it has left, whose late or duplicate result must change nothing.

use std::collections::HashMap;

use aitasks_contracts::ErrorCode;
use serde_json::Value;
use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::{Fenced, Lease, PendingEvent};
use crate::params::truncate_message;
use crate::pool::GenericClient;
use crate::queries::{BATCH_COMPLETE, BATCH_COMPLETE_MANY, BATCH_FAIL, BATCH_REQUEUE};
use crate::rows::event_from_row;

/// Complete the answered tasks of batch `batch_id`, each with its output and usage: one round
/// trip for the unscoped ones, then one each for the scoped (their admission bookkeeping).
/// Answers item by item in order; [`Fenced::Lost`] where the task is no longer running this
/// attempt in this batch, or its cancel was requested.
pub async fn complete_batch_tasks(
    client: &impl GenericClient,
    batch_id: Uuid,
    attempts: &[(Lease, &Value, Option<&Value>)],
) -> StoreResult<Vec<Fenced<PendingEvent>>> {
    let unscoped: Vec<&(Lease, &Value, Option<&Value>)> =
        attempts.iter().filter(|(lease, _, _)| !lease.scoped).collect();
    let mut events: HashMap<Uuid, PendingEvent> = HashMap::new();
    if !unscoped.is_empty() {
        let task_ids: Vec<Uuid> = unscoped.iter().map(|(lease, _, _)| lease.task_id).collect();
        let numbers: Vec<i32> = unscoped.iter().map(|(lease, _, _)| lease.attempt).collect();
        let outputs: Vec<&Value> = unscoped.iter().map(|(_, output, _)| *output).collect();
        let usages: Vec<Option<&Value>> = unscoped.iter().map(|(_, _, usage)| *usage).collect();
        let statement = client.prepare_cached(BATCH_COMPLETE_MANY.text()).await?;
        let params = BATCH_COMPLETE_MANY.bind(&[
            ("batch_id", &batch_id),
            ("task_ids", &task_ids),
            ("attempts", &numbers),
            ("outputs", &outputs),
            ("usages", &usages),
        ])?;
        for row in client.query(&statement, &params).await? {
            let event = event_from_row(&row)?;
            events.insert(event.task_id, event);
        }
    }
    for (lease, output, usage) in attempts.iter().filter(|(lease, _, _)| lease.scoped) {
        let statement = client.prepare_cached(BATCH_COMPLETE.text()).await?;
        let params = BATCH_COMPLETE.bind(&[
            ("batch_id", &batch_id),
            ("task_id", &lease.task_id),
            ("attempt", &lease.attempt),
            ("output", output),
            ("usage", usage),
        ])?;
        if let Some(row) = client.query_opt(&statement, &params).await? {
            let event = event_from_row(&row)?;
            events.insert(event.task_id, event);
        }
    }
    Ok(attempts
        .iter()
        .map(|(lease, _, _)| events.remove(&lease.task_id).map_or(Fenced::Lost, Fenced::Written))
        .collect())
}

/// End a task of batch `batch_id` `failed` with a line's error. [`Fenced::Lost`] where the task
/// is no longer running this attempt in this batch, or its cancel was requested.
pub async fn fail_batch_task(
    client: &impl GenericClient,
    batch_id: Uuid,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<Fenced<PendingEvent>> {
    let statement = client.prepare_cached(BATCH_FAIL.text()).await?;
    let (code, message) = (code.as_str(), truncate_message(message));
    let params = BATCH_FAIL.bind(&[
        ("batch_id", &batch_id),
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("error_code", &code),
        ("error_message", &message),
    ])?;
    Ok(match client.query_opt(&statement, &params).await? {
        Some(row) => Fenced::Written(event_from_row(&row)?),
        None => Fenced::Lost,
    })
}

/// Put a task of batch `batch_id` back in the queue for an on-demand retry after a line's
/// retryable error, keeping the error for the record. False when it is no longer running this
/// attempt in this batch, a cancel was requested or its attempt budget is spent.
pub async fn requeue_batch_task(
    client: &impl GenericClient,
    batch_id: Uuid,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(BATCH_REQUEUE.text()).await?;
    let (code, message) = (code.as_str(), truncate_message(message));
    let params = BATCH_REQUEUE.bind(&[
        ("batch_id", &batch_id),
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("error_code", &code),
        ("error_message", &message),
    ])?;
    Ok(client.execute(&statement, &params).await? == 1)
}
