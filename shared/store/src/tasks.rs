//! Tasks: create (idempotent on `(app, effect key)`), read within one application, and cancel
//! on request.

use uuid::Uuid;

use crate::model::{inserted_columns, new_id, task_columns, Created, NewTask, Task, TaskOwner};
use crate::pool::GenericClient;
use crate::sql::{cancel_request_set, split_settled, with_settlement};
use crate::{Settled, StoreError, StoreResult};

/// Insert a task of a run. The run row is read `FOR SHARE` in the same statement, so a cancel
/// of the run waits for this insert to commit (and then cancels the new task), or wins first
/// (and the insert sees the run canceled). One row comes back whenever the run exists.
const INSERT_RUN_TASK: &str = concat!(
    "WITH run AS (SELECT id AS owner_run_id, scope_id AS run_scope_id, state AS run_state, \
     actor ->> 'userId' AS run_user_id FROM runs WHERE id = $2 AND app_id = $1 FOR SHARE), \
     inserted AS (INSERT INTO tasks (id, app_id, run_id, scope_id, usage_user_id, step_key, \
     effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, max_attempts) \
     SELECT $3, $1, owner_run_id, run_scope_id, run_user_id, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
     FROM run WHERE run_state = 'running' \
     ON CONFLICT (app_id, effect_key) DO NOTHING RETURNING ",
    inserted_columns!(),
    ") SELECT run.run_state, inserted.* FROM run LEFT JOIN inserted ON true"
);

/// Insert a task owned by the application.
const INSERT_APP_TASK: &str = concat!(
    "INSERT INTO tasks (id, app_id, scope_id, usage_subject, step_key, effect_key, kind, request, \
     input_hash, model_id, model_ref, model_config_hash, max_attempts) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
     ON CONFLICT (app_id, effect_key) DO NOTHING RETURNING ",
    inserted_columns!()
);

const SELECT_TASK: &str = concat!("SELECT ", task_columns!(), " FROM tasks WHERE id = $1 AND app_id = $2");

const SELECT_TASK_BY_EFFECT_KEY: &str =
    concat!("SELECT ", task_columns!(), " FROM tasks WHERE app_id = $1 AND effect_key = $2");

const REQUEST_CANCEL: &str = with_settlement!(concat!(
    "UPDATE tasks SET ",
    cancel_request_set!(),
    " WHERE id = $1 AND app_id = $2 AND status IN ('queued', 'running')"
));

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
            let statement = client.prepare_cached(INSERT_RUN_TASK).await?;
            let row = client
                .query_opt(
                    &statement,
                    &[
                        &task.app_id,
                        run_id,
                        &id,
                        &task.step_key,
                        &task.effect_key,
                        &task.kind,
                        &task.request,
                        &task.input_hash,
                        &task.model_id,
                        &task.model_ref,
                        &task.model_config_hash,
                        &task.max_attempts,
                    ],
                )
                .await?
                .ok_or(StoreError::RunNotFound)?;
            if row.try_get::<_, &str>("run_state")? != "running" {
                return Err(StoreError::RunUnavailable);
            }
            if row.try_get::<_, Option<Uuid>>("id")?.is_none() {
                return Ok(None);
            }
            Task::inserted(task, &row).map(Some)
        }
        TaskOwner::Application { scope_id, usage_subject } => {
            let statement = client.prepare_cached(INSERT_APP_TASK).await?;
            let row = client
                .query_opt(
                    &statement,
                    &[
                        &id,
                        &task.app_id,
                        scope_id,
                        usage_subject,
                        &task.step_key,
                        &task.effect_key,
                        &task.kind,
                        &task.request,
                        &task.input_hash,
                        &task.model_id,
                        &task.model_ref,
                        &task.model_config_hash,
                        &task.max_attempts,
                    ],
                )
                .await?;
            row.map(|row| Task::inserted(task, &row)).transpose()
        }
    }
}

/// A task of this application, or `None` (another application's task is `None` too).
pub async fn get_task(client: &impl GenericClient, app_id: &str, task_id: Uuid) -> StoreResult<Option<Task>> {
    let statement = client.prepare_cached(SELECT_TASK).await?;
    client.query_opt(&statement, &[&task_id, &app_id]).await?.as_ref().map(Task::from_row).transpose()
}

/// A task of this application by its effect key.
pub async fn get_task_by_effect_key(
    client: &impl GenericClient,
    app_id: &str,
    effect_key: &str,
) -> StoreResult<Option<Task>> {
    let statement = client.prepare_cached(SELECT_TASK_BY_EFFECT_KEY).await?;
    client.query_opt(&statement, &[&app_id, &effect_key]).await?.as_ref().map(Task::from_row).transpose()
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
    let statement = client.prepare_cached(REQUEST_CANCEL).await?;
    let rows = client.query(&statement, &[&task_id, &app_id]).await?;
    let (mut settled, mut flagged) = split_settled(&rows)?;
    if let Some(settled) = settled.pop() {
        return Ok(Some(CancelRequest::Canceled(settled)));
    }
    if let Some(task) = flagged.pop() {
        return Ok(Some(CancelRequest::Flagged(task)));
    }
    Ok(get_task(client, app_id, task_id).await?.map(CancelRequest::AlreadyTerminal))
}
