//! Runs: create, read, cancel.

use uuid::Uuid;

use crate::model::{new_id, NewRun, Run};
use crate::pool::{Client, GenericClient};
use crate::queries::{CANCEL_RUN, CANCEL_RUN_TASKS, INSERT_RUN, SELECT_RUN};
use crate::sql::{split_settled, CANCELED_CODE};
use crate::{Settled, StoreResult};

/// Create a run. One round trip.
pub async fn create_run(client: &impl GenericClient, run: &NewRun) -> StoreResult<Run> {
    let statement = client.prepare_cached(INSERT_RUN.text()).await?;
    let id = new_id();
    let params = INSERT_RUN.bind(&[
        ("id", &id),
        ("app_id", &run.app_id),
        ("scope_id", &run.scope_id),
        ("actor", &run.actor),
    ])?;
    let row = client.query_one(&statement, &params).await?;
    Run::from_row(&row)
}

/// A run of this application, or `None` (another application's run is `None` too).
pub async fn get_run(client: &impl GenericClient, app_id: &str, run_id: Uuid) -> StoreResult<Option<Run>> {
    let statement = client.prepare_cached(SELECT_RUN.text()).await?;
    let params = SELECT_RUN.bind(&[("run_id", &run_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Run::from_row).transpose()
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
    let cancel_run = transaction.prepare_cached(CANCEL_RUN.text()).await?;
    let params = CANCEL_RUN.bind(&[("run_id", &run_id), ("app_id", &app_id)])?;
    let Some(row) = transaction.query_opt(&cancel_run, &params).await? else {
        return Ok(None);
    };
    let run = Run::from_row(&row)?;
    let cancel_tasks = transaction.prepare_cached(CANCEL_RUN_TASKS.text()).await?;
    let params = CANCEL_RUN_TASKS.bind(&[("run_id", &run_id), ("canceled_code", &CANCELED_CODE)])?;
    let rows = transaction.query(&cancel_tasks, &params).await?;
    transaction.commit().await?;
    let (settled, flagged) = split_settled(&rows)?;
    Ok(Some(CanceledRun { run, settled, flagged: flagged.into_iter().map(|t| t.id).collect() }))
}
