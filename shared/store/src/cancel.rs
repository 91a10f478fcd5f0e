//! Cancellation (`sql/cancel/`): of one task on request, and of a run, whose tasks get the
//! cancel a page at a time (by the request, then by the sweeper for what it had no time for).

use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::{Custody, Ended, PendingEvent, Run, Task};
use crate::params::{limit, CANCELED_CODE};
use crate::pool::GenericClient;
use crate::queries::{CANCEL_RUN, CANCEL_RUN_TASKS, FINISH_RUN_CANCEL, PENDING_RUN_CANCELS, REQUEST_CANCEL};
use crate::read::get_task;
use crate::rows::split_ended;

/// The outcome of a cancel request.
#[derive(Debug, Clone, PartialEq)]
pub enum CancelRequest {
    /// The task was queued and is now `canceled`, with its completion event.
    Canceled(Ended),
    /// The task is running: it is flagged and its worker aborts within a cancel poll.
    Flagged(Task),
    /// The task was already terminal: nothing changed.
    AlreadyTerminal(Task),
}

impl CancelRequest {
    pub fn task(&self) -> &Task {
        match self {
            CancelRequest::Canceled(settled) => &settled.task,
            CancelRequest::Flagged(task) | CancelRequest::AlreadyTerminal(task) => task,
        }
    }
}

/// Request cancellation of a task of this application. One round trip unless the task is
/// already terminal. `None` when there is no such task for this application.
pub async fn request_cancel(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
) -> StoreResult<Option<CancelRequest>> {
    let statement = client.prepare_cached(REQUEST_CANCEL.text()).await?;
    let params = REQUEST_CANCEL.bind(&[
        ("task_id", &task_id),
        ("app_id", &app_id),
        ("canceled_code", &CANCELED_CODE),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let (mut settled, mut flagged) = split_ended(&rows)?;
    if let Some(settled) = settled.pop() {
        return Ok(Some(CancelRequest::Canceled(settled)));
    }
    if let Some(task) = flagged.pop() {
        return Ok(Some(CancelRequest::Flagged(task)));
    }
    Ok(get_task(client, app_id, task_id).await?.map(CancelRequest::AlreadyTerminal))
}

/// What one page of a run's cancel did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunTasksCanceled {
    /// Queued tasks that ended `canceled`: their completion events, to publish.
    pub ended: Vec<PendingEvent>,
    /// Running tasks now flagged: their workers abort within a cancel poll.
    pub flagged: Vec<Uuid>,
}

impl RunTasksCanceled {
    /// Tasks this page reached.
    pub fn touched(&self) -> usize {
        self.ended.len() + self.flagged.len()
    }
}

/// Cancel a run: once this returns, no task can join it. Its tasks are reached by
/// [`cancel_run_tasks`], a page at a time, until [`finish_run_cancel`] finds none left; the
/// sweeper finishes what the request had no time for ([`pending_run_cancels`]). `None` when the
/// application has no such run. Idempotent.
pub async fn cancel_run(client: &impl GenericClient, app_id: &str, run_id: Uuid) -> StoreResult<Option<Run>> {
    let statement = client.prepare_cached(CANCEL_RUN.text()).await?;
    let params = CANCEL_RUN.bind(&[("run_id", &run_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Run::from_row).transpose()
}

/// Up to `page` of a canceled run's unfinished tasks get the cancel (queued ones end, running
/// ones are flagged). Fewer than `page` touched means none were left unlocked.
pub async fn cancel_run_tasks(
    client: &impl GenericClient,
    run_id: Uuid,
    page: usize,
) -> StoreResult<RunTasksCanceled> {
    let statement = client.prepare_cached(CANCEL_RUN_TASKS.text()).await?;
    let page = limit(page);
    let params =
        CANCEL_RUN_TASKS.bind(&[("run_id", &run_id), ("canceled_code", &CANCELED_CODE), ("page", &page)])?;
    let mut canceled = RunTasksCanceled::default();
    for row in client.query(&statement, &params).await? {
        let task_id: Uuid = row.try_get("id")?;
        match row.try_get::<_, Option<i64>>("event_id")? {
            Some(id) => canceled.ended.push(PendingEvent {
                id,
                task_id,
                payload: row.try_get("event_payload")?,
                custody: Custody::Outbox,
            }),
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

/// Up to `page` runs whose cancel has not reached every task yet, oldest first.
pub async fn pending_run_cancels(client: &impl GenericClient, page: usize) -> StoreResult<Vec<Uuid>> {
    let statement = client.prepare_cached(PENDING_RUN_CANCELS.text()).await?;
    let page = limit(page);
    let params = PENDING_RUN_CANCELS.bind(&[("page", &page)])?;
    client.query(&statement, &params).await?.iter().map(|row| Ok(row.try_get(0)?)).collect()
}
