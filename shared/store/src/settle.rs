//! Terminal transitions. Each is one statement that also writes the completion event, and
//! each is fenced: it changes nothing unless the task is still in the state (and attempt) the
//! caller holds.

use serde_json::Value;
use uuid::Uuid;

use crate::model::{settled_from_row, Finished, Lease, PendingEvent, Settlement};
use crate::pool::GenericClient;
use crate::sql::{truncate_message, with_settled_event, with_settlement};
use crate::StoreResult;

macro_rules! complete_update {
    () => {
        "UPDATE tasks SET status = 'succeeded', output = $3, usage = $4, error_code = NULL, \
         error_message = NULL, completed_at = now(), updated_at = now() \
         WHERE id = $1 AND status = 'running' AND attempts = $2 AND cancel_requested_at IS NULL"
    };
}

macro_rules! fail_update {
    () => {
        "UPDATE tasks SET status = 'failed', output = NULL, error_code = $3, error_message = $4, \
         completed_at = now(), updated_at = now() \
         WHERE id = $1 AND status = 'running' AND attempts = $2 AND cancel_requested_at IS NULL"
    };
}

const COMPLETE: &str = with_settled_event!(complete_update!());
const COMPLETE_UNSCOPED: &str = with_settled_event!(unscoped: complete_update!());

const FAIL: &str = with_settled_event!(fail_update!());
const FAIL_UNSCOPED: &str = with_settled_event!(unscoped: fail_update!());

const SETTLE_CANCEL: &str = with_settlement!(
    "UPDATE tasks SET status = 'canceled', output = NULL, error_code = 'WORKFLOW_AI_CANCELED', \
     error_message = 'The task was canceled.', completed_at = now(), updated_at = now() \
     WHERE id = $1 AND status IN ('queued', 'running') AND cancel_requested_at IS NOT NULL"
);

/// Store a validated output. One round trip, event included; only the event comes back.
/// [`Finished::Lost`] when the lease is gone or a cancel was requested (then settle the cancel
/// instead).
pub async fn complete(
    client: &impl GenericClient,
    lease: Lease,
    output: &Value,
    usage: Option<&Value>,
) -> StoreResult<Finished> {
    let statement = client.prepare_cached(if lease.scoped { COMPLETE } else { COMPLETE_UNSCOPED }).await?;
    let row = client.query_opt(&statement, &[&lease.task_id, &lease.attempt, output, &usage]).await?;
    finished(row)
}

/// End a running task `failed` with an error code. One round trip, event included; only the
/// event comes back.
pub async fn fail(
    client: &impl GenericClient,
    lease: Lease,
    code: &str,
    message: &str,
) -> StoreResult<Finished> {
    let statement = client.prepare_cached(if lease.scoped { FAIL } else { FAIL_UNSCOPED }).await?;
    let row = client
        .query_opt(&statement, &[&lease.task_id, &lease.attempt, &code, &truncate_message(message)])
        .await?;
    finished(row)
}

/// End a task whose cancel was requested `canceled`, whoever notices first (its worker, a
/// claim, or the sweeper). Not fenced on an attempt: a requested cancel wins over any lease.
pub async fn settle_cancel(client: &impl GenericClient, task_id: Uuid) -> StoreResult<Settlement> {
    let statement = client.prepare_cached(SETTLE_CANCEL).await?;
    let row = client.query_opt(&statement, &[&task_id]).await?;
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
