//! Runs: create, read, cancel.

use uuid::Uuid;

use crate::model::{new_id, run_columns, NewRun, Run};
use crate::pool::{Client, GenericClient};
use crate::sql::{cancel_request_set, split_settled, with_settlement};
use crate::{Settled, StoreResult};

const INSERT_RUN: &str = concat!(
    "INSERT INTO runs (id, app_id, scope_id, actor) VALUES ($1, $2, $3, $4) RETURNING ",
    run_columns!()
);

const SELECT_RUN: &str = concat!("SELECT ", run_columns!(), " FROM runs WHERE id = $1 AND app_id = $2");

const CANCEL_RUN: &str = concat!(
    "UPDATE runs SET state = 'canceled', cancel_requested_at = COALESCE(cancel_requested_at, now()), \
     updated_at = now() WHERE id = $1 AND app_id = $2 RETURNING ",
    run_columns!()
);

const CANCEL_RUN_TASKS: &str = with_settlement!(concat!(
    "UPDATE tasks SET ",
    cancel_request_set!(),
    " WHERE run_id = $1 AND status IN ('queued', 'running')"
));

/// Create a run. One round trip.
pub async fn create_run(client: &impl GenericClient, run: &NewRun) -> StoreResult<Run> {
    let statement = client.prepare_cached(INSERT_RUN).await?;
    let row = client.query_one(&statement, &[&new_id(), &run.app_id, &run.scope_id, &run.actor]).await?;
    Run::from_row(&row)
}

/// A run of this application, or `None` (another application's run is `None` too).
pub async fn get_run(client: &impl GenericClient, app_id: &str, run_id: Uuid) -> StoreResult<Option<Run>> {
    let statement = client.prepare_cached(SELECT_RUN).await?;
    client.query_opt(&statement, &[&run_id, &app_id]).await?.as_ref().map(Run::from_row).transpose()
}

/// The result of canceling a run.
#[derive(Debug, Clone, PartialEq)]
pub struct CanceledRun {
    pub run: Run,
    /// Queued tasks that ended `canceled` with it, with their completion events to publish.
    pub settled: Vec<Settled>,
    /// Running tasks now flagged: their workers abort within a cancel poll.
    pub flagged: Vec<Uuid>,
}

/// Cancel a run: in one transaction its queued tasks end `canceled` and its running tasks are
/// flagged for their workers. Idempotent. `None` when the run is not this application's.
///
/// The run row is updated first: creates lock it `FOR SHARE`, so a create racing this cancel
/// either commits before (and its task is canceled here) or sees the run canceled.
pub async fn cancel_run(client: &mut Client, app_id: &str, run_id: Uuid) -> StoreResult<Option<CanceledRun>> {
    let transaction = client.transaction().await?;
    let cancel_run = transaction.prepare_cached(CANCEL_RUN).await?;
    let Some(row) = transaction.query_opt(&cancel_run, &[&run_id, &app_id]).await? else {
        return Ok(None);
    };
    let run = Run::from_row(&row)?;
    let cancel_tasks = transaction.prepare_cached(CANCEL_RUN_TASKS).await?;
    let rows = transaction.query(&cancel_tasks, &[&run_id]).await?;
    transaction.commit().await?;
    let (settled, flagged) = split_settled(&rows)?;
    Ok(Some(CanceledRun { run, settled, flagged: flagged.into_iter().map(|t| t.id).collect() }))
}
