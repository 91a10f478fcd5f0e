//! How an attempt ends (`sql/settle/`): the terminal transitions (complete, one or many
//! together; fail; a requested cancel), each one statement, whose trigger writes the completion
//! event (migrations/V38) that the statement answers; and the ways back to the queue (a retry, a claim given back unworked). Every one is
//! fenced: it changes nothing unless the task is still in the state (and attempt, and provider
//! batch) the caller holds. A provider batch's results settle through these too, their leases
//! naming the batch ([`Lease::batch_id`]).

use std::collections::HashMap;

use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use aitasks_contracts::ErrorCode;

use crate::error::StoreResult;
use crate::model::{Custody, Ended, Fenced, Lease, PendingEvent};
use crate::params::{truncate_message, CANCELED_CODE};
use crate::pool::GenericClient;
use crate::queries::{
    COMPLETE_ATTEMPT, COMPLETE_MANY, END_CANCELED, FAIL_ATTEMPT, GIVE_BACK, REQUEUE_ATTEMPT,
};
use crate::rows::{ended_event_from_row, ended_from_row};

/// Store a validated output. One round trip, event included; only the event comes back.
/// [`Fenced::Lost`] when the lease is gone or a cancel was requested (then settle the cancel
/// instead). `hand_over`: the caller publishes the event right after the commit and has the
/// task's SQS message to fall back on ([`Custody::HandedOver`]); otherwise it is the outbox's.
pub async fn complete_attempt(
    client: &impl GenericClient,
    lease: Lease,
    output: &Value,
    usage: Option<&Value>,
    hand_over: bool,
) -> StoreResult<Fenced<PendingEvent>> {
    let sql = &COMPLETE_ATTEMPT;
    let statement = client.prepare_cached(sql.text()).await?;
    let setting = hand_over_setting(hand_over);
    let params = sql.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("batch_id", &lease.batch_id),
        ("output", output),
        ("usage", &usage),
        ("hand_over", &setting),
    ])?;
    match client.query_opt(&statement, &params).await? {
        Some(row) => Ok(Fenced::Written(completed_event(&row, hand_over)?)),
        None => Ok(Fenced::Lost),
    }
}

/// The value of `aitasks.hand_over_events` a completion sets (sql/fragments/hand_over.sql).
fn hand_over_setting(hand_over: bool) -> &'static str {
    if hand_over {
        "on"
    } else {
        "off"
    }
}

/// A completion's event, with the custody the statement gave it.
fn completed_event(row: &Row, hand_over: bool) -> StoreResult<PendingEvent> {
    let mut event = ended_event_from_row(row)?;
    if hand_over {
        event.custody = Custody::HandedOver { owes_callbacks: row.try_get("owes_callbacks")? };
    }
    Ok(event)
}

/// End a running task `failed` with an error code. One round trip, event included; only the
/// event comes back.
pub async fn fail_attempt(
    client: &impl GenericClient,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<Fenced<PendingEvent>> {
    let sql = &FAIL_ATTEMPT;
    let statement = client.prepare_cached(sql.text()).await?;
    let (code, message) = (code.as_str(), truncate_message(message));
    let params = sql.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("batch_id", &lease.batch_id),
        ("error_code", &code),
        ("error_message", &message),
    ])?;
    let row = client.query_opt(&statement, &params).await?;
    written_event(row)
}

/// End a task whose cancel was requested `canceled`, whoever notices first (its worker, a
/// claim, or the sweeper). Not fenced on an attempt: a requested cancel wins over any lease.
pub async fn end_canceled(client: &impl GenericClient, task_id: Uuid) -> StoreResult<Fenced<Box<Ended>>> {
    let statement = client.prepare_cached(END_CANCELED.text()).await?;
    let params = END_CANCELED.bind(&[("task_id", &task_id), ("canceled_code", &CANCELED_CODE)])?;
    let row = client.query_opt(&statement, &params).await?;
    written_task(row)
}

/// Complete attempts that finished together, each with its validated output and usage: one
/// round trip for all of them, events included. Answers item by item in order, fenced as
/// [`complete_attempt`] is; an attempt that [completes alone](Lease::completes_alone) is
/// [`Fenced::Lost`] here, left for its own statement. `hand_over` as for [`complete_attempt`].
pub async fn complete_many(
    client: &impl GenericClient,
    attempts: &[(Lease, &Value, Option<&Value>)],
    hand_over: bool,
) -> StoreResult<Vec<Fenced<PendingEvent>>> {
    let given: Vec<&(Lease, &Value, Option<&Value>)> =
        attempts.iter().filter(|(lease, _, _)| !lease.completes_alone()).collect();
    // A group of one takes the single statement: the same fence and event, without the id-order
    // lock the group needs against a deadlock with another group (a row lock is a WAL record).
    if let ([(lease, output, usage)], [_]) = (given.as_slice(), attempts) {
        return Ok(vec![complete_attempt(client, *lease, output, *usage, hand_over).await?]);
    }
    let task_ids: Vec<Uuid> = given.iter().map(|(lease, _, _)| lease.task_id).collect();
    let numbers: Vec<i32> = given.iter().map(|(lease, _, _)| lease.attempt).collect();
    let batch_ids: Vec<Option<Uuid>> = given.iter().map(|(lease, _, _)| lease.batch_id).collect();
    let outputs: Vec<&Value> = given.iter().map(|(_, output, _)| *output).collect();
    let usages: Vec<Option<&Value>> = given.iter().map(|(_, _, usage)| *usage).collect();
    // Each event by the lease that wrote it: a task given twice (a stale attempt beside the fresh
    // one) is answered for the attempt the statement completed, the other item `Lost`.
    let mut events: HashMap<(Uuid, i32), PendingEvent> = HashMap::new();
    if !given.is_empty() {
        let statement = client.prepare_cached(COMPLETE_MANY.text()).await?;
        let setting = hand_over_setting(hand_over);
        let params = COMPLETE_MANY.bind(&[
            ("task_ids", &task_ids),
            ("attempts", &numbers),
            ("batch_ids", &batch_ids),
            ("outputs", &outputs),
            ("usages", &usages),
            ("hand_over", &setting),
        ])?;
        for row in client.query(&statement, &params).await? {
            let attempt: i32 = row.try_get("settled_attempt")?;
            let event = completed_event(&row, hand_over)?;
            events.insert((event.task_id, attempt), event);
        }
    }
    Ok(attempts
        .iter()
        .map(|(lease, _, _)| {
            let written =
                if lease.completes_alone() { None } else { events.remove(&(lease.task_id, lease.attempt)) };
            written.map_or(Fenced::Lost, Fenced::Written)
        })
        .collect())
}

/// Put a running task back in the queue after a retryable failure, keeping the error for the
/// record; a batch's task leaves its batch for an on-demand retry. Returns false when the lease was lost, a cancel was requested (settle it with
/// [`end_canceled`]) or the attempt budget is spent (fail it instead).
pub async fn requeue_attempt(
    client: &impl GenericClient,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(REQUEUE_ATTEMPT.text()).await?;
    let (code, message) = (code.as_str(), truncate_message(message));
    let params = REQUEUE_ATTEMPT.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("batch_id", &lease.batch_id),
        ("error_code", &code),
        ("error_message", &message),
    ])?;
    let changed = client.execute(&statement, &params).await?;
    Ok(changed == 1)
}

/// Give a claimed task back unworked, its attempt uncounted. `false` when the lease is gone or
/// a cancel was requested (settle that instead).
pub async fn give_back(client: &impl GenericClient, lease: Lease) -> StoreResult<bool> {
    let statement = client.prepare_cached(GIVE_BACK.text()).await?;
    let params = GIVE_BACK.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("batch_id", &lease.batch_id),
    ])?;
    Ok(client.execute(&statement, &params).await? == 1)
}

fn written_event(row: Option<tokio_postgres::Row>) -> StoreResult<Fenced<PendingEvent>> {
    match row {
        Some(row) => Ok(Fenced::Written(ended_event_from_row(&row)?)),
        None => Ok(Fenced::Lost),
    }
}

fn written_task(row: Option<tokio_postgres::Row>) -> StoreResult<Fenced<Box<Ended>>> {
    match row {
        Some(row) => Ok(Fenced::Written(Box::new(ended_from_row(&row)?))),
        None => Ok(Fenced::Lost),
    }
}
