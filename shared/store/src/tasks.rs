//! Tasks: create (idempotent on `(app, effect key)`), read within one application, and cancel
//! on request.

use uuid::Uuid;

use crate::model::{new_id, Created, NewTask, RunState, Task, TaskOwner};
use crate::pool::GenericClient;
use crate::queries::{
    INSERT_APP_TASK, INSERT_RUN_TASK, REQUEST_CANCEL, SELECT_TASK, SELECT_TASK_BY_EFFECT_KEY,
};
use crate::sql::{split_settled, CANCELED_CODE};
use crate::statement::Param;
use crate::{Settled, StoreError, StoreResult};

/// Create a task, or return the task this application already created with the same effect
/// key (untouched). One round trip when the task is new; a second one reads an existing task.
///
/// Errors: [`StoreError::RunNotFound`], [`StoreError::RunUnavailable`] (canceled run),
/// [`StoreError::RequestTooLarge`].
pub async fn create_task(client: &impl GenericClient, task: &NewTask) -> StoreResult<Created> {
    // A task deleted between our conflicting insert and the read is retried once; the second
    // insert then succeeds.
    for _ in 0..2 {
        if let Some(created) = insert_task(client, task).await? {
            return Ok(Created::New(created));
        }
        if let Some(existing) = get_task_by_effect_key(client, &task.app_id, &task.effect_key).await? {
            return Ok(Created::Existing(existing));
        }
    }
    Err(StoreError::Corrupt("effect key conflict without a visible task".into()))
}

/// Insert; `None` when the effect key is taken.
pub(crate) async fn insert_task(client: &impl GenericClient, task: &NewTask) -> StoreResult<Option<Task>> {
    let id = new_id();
    match &task.owner {
        TaskOwner::Run(run_id) => {
            let statement = client.prepare_cached(INSERT_RUN_TASK.text()).await?;
            let mut values: Vec<Param> = vec![("id", &id), ("app_id", &task.app_id), ("run_id", run_id)];
            values.extend(task.request_values());
            let params = INSERT_RUN_TASK.bind(&values)?;
            let row = client.query_opt(&statement, &params).await?.ok_or(StoreError::RunNotFound)?;
            if RunState::parse(row.try_get("run_state")?) != Some(RunState::Running) {
                return Err(StoreError::RunUnavailable);
            }
            if row.try_get::<_, Option<Uuid>>("id")?.is_none() {
                return Ok(None);
            }
            Task::inserted(task, &row).map(Some)
        }
        TaskOwner::Application { scope_id, usage_subject } => {
            let statement = client.prepare_cached(INSERT_APP_TASK.text()).await?;
            let mut values: Vec<Param> = vec![
                ("id", &id),
                ("app_id", &task.app_id),
                ("scope_id", scope_id),
                ("usage_subject", usage_subject),
            ];
            values.extend(task.request_values());
            let params = INSERT_APP_TASK.bind(&values)?;
            let row = client.query_opt(&statement, &params).await?;
            row.map(|row| Task::inserted(task, &row)).transpose()
        }
    }
}

/// A task of this application, or `None` (another application's task is `None` too).
pub async fn get_task(client: &impl GenericClient, app_id: &str, task_id: Uuid) -> StoreResult<Option<Task>> {
    let statement = client.prepare_cached(SELECT_TASK.text()).await?;
    let params = SELECT_TASK.bind(&[("task_id", &task_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Task::from_row).transpose()
}

/// A task of this application by its effect key.
pub async fn get_task_by_effect_key(
    client: &impl GenericClient,
    app_id: &str,
    effect_key: &str,
) -> StoreResult<Option<Task>> {
    let statement = client.prepare_cached(SELECT_TASK_BY_EFFECT_KEY.text()).await?;
    let params = SELECT_TASK_BY_EFFECT_KEY.bind(&[("app_id", &app_id), ("effect_key", &effect_key)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Task::from_row).transpose()
}

/// The outcome of a cancel request.
#[derive(Debug, Clone, PartialEq)]
pub enum CancelRequest {
    /// The task was queued and is now `canceled`, with its completion event.
    Canceled(Settled),
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
    let (mut settled, mut flagged) = split_settled(&rows)?;
    if let Some(settled) = settled.pop() {
        return Ok(Some(CancelRequest::Canceled(settled)));
    }
    if let Some(task) = flagged.pop() {
        return Ok(Some(CancelRequest::Flagged(task)));
    }
    Ok(get_task(client, app_id, task_id).await?.map(CancelRequest::AlreadyTerminal))
}
