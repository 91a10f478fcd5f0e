//! Terminal transitions (`sql/settle/`). Each is one statement that also writes the completion
//! event, and each is fenced: it changes nothing unless the task is still in the state (and
//! attempt) the caller holds.

use serde_json::Value;
use uuid::Uuid;

use aitasks_contracts::ErrorCode;

use crate::model::{settled_from_row, Finished, Lease, PendingEvent, Settlement};
use crate::pool::GenericClient;
use crate::queries::{COMPLETE, COMPLETE_UNSCOPED, FAIL, FAIL_UNSCOPED, SETTLE_CANCEL};
use crate::sql::{truncate_message, CANCELED_CODE};
use crate::StoreResult;

/// Store a validated output. One round trip, event included; only the event comes back.
/// [`Finished::Lost`] when the lease is gone or a cancel was requested (then settle the cancel
/// instead).
pub async fn complete(
    client: &impl GenericClient,
    lease: Lease,
    output: &Value,
    usage: Option<&Value>,
) -> StoreResult<Finished> {
    let sql = if lease.scoped { &COMPLETE } else { &COMPLETE_UNSCOPED };
    let statement = client.prepare_cached(sql.text()).await?;
    let params = sql.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("output", output),
        ("usage", &usage),
    ])?;
    let row = client.query_opt(&statement, &params).await?;
    finished(row)
}

/// End a running task `failed` with an error code. One round trip, event included; only the
/// event comes back.
pub async fn fail(
    client: &impl GenericClient,
    lease: Lease,
    code: ErrorCode,
    message: &str,
) -> StoreResult<Finished> {
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
    finished(row)
}

/// End a task whose cancel was requested `canceled`, whoever notices first (its worker, a
/// claim, or the sweeper). Not fenced on an attempt: a requested cancel wins over any lease.
pub async fn settle_cancel(client: &impl GenericClient, task_id: Uuid) -> StoreResult<Settlement> {
    let statement = client.prepare_cached(SETTLE_CANCEL.text()).await?;
    let params = SETTLE_CANCEL.bind(&[("task_id", &task_id), ("canceled_code", &CANCELED_CODE)])?;
    let row = client.query_opt(&statement, &params).await?;
    settlement(row)
}

fn finished(row: Option<tokio_postgres::Row>) -> StoreResult<Finished> {
    match row {
        Some(row) => Ok(Finished::Settled(PendingEvent {
            id: row.try_get("id")?,
            task_id: row.try_get("task_id")?,
            payload: row.try_get("payload")?,
        })),
        None => Ok(Finished::Lost),
    }
}

fn settlement(row: Option<tokio_postgres::Row>) -> StoreResult<Settlement> {
    match row {
        Some(row) => Ok(Settlement::Settled(Box::new(settled_from_row(&row)?))),
        None => Ok(Settlement::Lost),
    }
}
