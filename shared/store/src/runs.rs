//! Runs: create, read, cancel.

use uuid::Uuid;

use crate::model::{new_id, NewRun, PendingEvent, Run};
use crate::pool::GenericClient;
use crate::queries::{
    CANCEL_RUN, CANCEL_RUN_TASKS, FINISH_RUN_CANCEL, INSERT_RUN, PENDING_RUN_CANCELS, SELECT_RUN,
};
use crate::sql::{limit, CANCELED_CODE};
use crate::StoreResult;

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

/// What one batch of a run's cancel did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunTasksCanceled {
    /// Queued tasks that ended `canceled`: their completion events, to publish.
    pub ended: Vec<PendingEvent>,
    /// Running tasks now flagged: their workers abort within a cancel poll.
    pub flagged: Vec<Uuid>,
}

impl RunTasksCanceled {
    /// Tasks this batch reached.
    pub fn touched(&self) -> usize {
        self.ended.len() + self.flagged.len()
    }
}

/// Cancel a run: once this returns, no task can join it. Its tasks are reached by
/// [`cancel_run_tasks`], a batch at a time, until [`finish_run_cancel`] finds none left; the
/// sweeper finishes what the request had no time for ([`pending_run_cancels`]). `None` when the
/// application has no such run. Idempotent.
pub async fn cancel_run(client: &impl GenericClient, app_id: &str, run_id: Uuid) -> StoreResult<Option<Run>> {
    let statement = client.prepare_cached(CANCEL_RUN.text()).await?;
    let params = CANCEL_RUN.bind(&[("run_id", &run_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Run::from_row).transpose()
}

/// Up to `batch` of a canceled run's unfinished tasks get the cancel (queued ones end, running
/// ones are flagged). Fewer than `batch` touched means none were left unlocked.
pub async fn cancel_run_tasks(
    client: &impl GenericClient,
    run_id: Uuid,
    batch: usize,
) -> StoreResult<RunTasksCanceled> {
    let statement = client.prepare_cached(CANCEL_RUN_TASKS.text()).await?;
    let batch = limit(batch);
    let params = CANCEL_RUN_TASKS.bind(&[
        ("run_id", &run_id),
        ("canceled_code", &CANCELED_CODE),
        ("batch", &batch),
    ])?;
    let mut canceled = RunTasksCanceled::default();
    for row in client.query(&statement, &params).await? {
        let task_id: Uuid = row.try_get("id")?;
        match row.try_get::<_, Option<i64>>("event_id")? {
            Some(id) => {
                canceled.ended.push(PendingEvent { id, task_id, payload: row.try_get("event_payload")? })
            }
            None => canceled.flagged.push(task_id),
        }
    }
    Ok(canceled)
}

/// Mark the run's cancel finished when no unfinished task of it is left without the cancel.
/// `true` when it is finished now.
pub async fn finish_run_cancel(client: &impl GenericClient, run_id: Uuid) -> StoreResult<bool> {
    let statement = client.prepare_cached(FINISH_RUN_CANCEL.text()).await?;
    let params = FINISH_RUN_CANCEL.bind(&[("run_id", &run_id)])?;
    Ok(client.query_opt(&statement, &params).await?.is_some())
}

/// Up to `batch` runs whose cancel has not reached every task yet, oldest first.
pub async fn pending_run_cancels(client: &impl GenericClient, batch: usize) -> StoreResult<Vec<Uuid>> {
    let statement = client.prepare_cached(PENDING_RUN_CANCELS.text()).await?;
    let batch = limit(batch);
    let params = PENDING_RUN_CANCELS.bind(&[("batch", &batch)])?;
    client.query(&statement, &params).await?.iter().map(|row| Ok(row.try_get(0)?)).collect()
}
