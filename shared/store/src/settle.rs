//! Terminal transitions (`sql/settle/`). Each is one statement that also writes the completion
//! event, and each is fenced: it changes nothing unless the task is still in the state (and
//! attempt) the caller holds.

use serde_json::Value;
use uuid::Uuid;

use aitasks_contracts::ErrorCode;

use crate::model::{settled_from_row, Fenced, Lease, PendingEvent, Settled};
use crate::pool::GenericClient;
use crate::queries::{COMPLETE, COMPLETE_UNSCOPED, END_CANCELED, FAIL, FAIL_UNSCOPED};
use crate::sql::{truncate_message, CANCELED_CODE};
use crate::StoreResult;

/// Store a validated output. One round trip, event included; only the event comes back.
/// [`Fenced::Lost`] when the lease is gone or a cancel was requested (then settle the cancel
/// instead).
pub async fn complete_attempt(
    client: &impl GenericClient,
    lease: Lease,
    output: &Value,
    usage: Option<&Value>,
) -> StoreResult<Fenced<PendingEvent>> {
    let sql = if lease.scoped { &COMPLETE } else { &COMPLETE_UNSCOPED };
    let statement = client.prepare_cached(sql.text()).await?;
    let params = sql.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("output", output),
        ("usage", &usage),
    ])?;
    let row = client.query_opt(&statement, &params).await?;
    written_event(row)
}

/// End a running task `failed` with an error code. One round trip, event included; only the
/// event comes back.
pub async fn fail_attempt(
    client: &impl GenericClient,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<Fenced<PendingEvent>> {
    let sql = if lease.scoped { &FAIL } else { &FAIL_UNSCOPED };
    let statement = client.prepare_cached(sql.text()).await?;
    let (code, message) = (code.as_str(), truncate_message(message));
    let params = sql.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("error_code", &code),
        ("error_message", &message),
    ])?;
    let row = client.query_opt(&statement, &params).await?;
    written_event(row)
}

/// End a task whose cancel was requested `canceled`, whoever notices first (its worker, a
/// claim, or the sweeper). Not fenced on an attempt: a requested cancel wins over any lease.
pub async fn end_canceled(client: &impl GenericClient, task_id: Uuid) -> StoreResult<Fenced<Box<Settled>>> {
    let statement = client.prepare_cached(END_CANCELED.text()).await?;
    let params = END_CANCELED.bind(&[("task_id", &task_id), ("canceled_code", &CANCELED_CODE)])?;
    let row = client.query_opt(&statement, &params).await?;
    written_task(row)
}

fn written_event(row: Option<tokio_postgres::Row>) -> StoreResult<Fenced<PendingEvent>> {
    match row {
        Some(row) => Ok(Fenced::Written(PendingEvent {
            id: row.try_get("id")?,
            task_id: row.try_get("task_id")?,
            payload: row.try_get("payload")?,
        })),
        None => Ok(Fenced::Lost),
    }
}

fn written_task(row: Option<tokio_postgres::Row>) -> StoreResult<Fenced<Box<Settled>>> {
    match row {
        Some(row) => Ok(Fenced::Written(Box::new(settled_from_row(&row)?))),
        None => Ok(Fenced::Lost),
    }
}
