//! Replaying a task (docs/api.md, "Replaying a task"): `POST /v1/tasks/{taskId}/replay` makes a
//! new task from an ended one (its request, model, step, owner and scope) through the create
//! path ([`crate::create`]), so it is admitted exactly as a create (run, effect key, quotas,
//! scoped budgets, the result cache); and `GET /v1/tasks/{taskId}/replays`, its history. The
//! original is only read.

use aitasks_contracts::{
    derived_replay_key, skip, AppId, ReadCost, ReplayTask, TaskId, TaskReplays, HISTORY_ITEMS_MAX,
};
use aitasks_store::{self as store, Created, ReplaySource};
use serde_json::{json, Value};

use crate::api_error::ApiError;
use crate::app::App;

/// Why a task is not replayed: a skip reason of an operation ([`skip`]), or the request's
/// refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotReplayed {
    /// Queued or running.
    NotEnded,
    /// Scoped, but stored before its scope terms were kept.
    NotReplayable,
}

impl NotReplayed {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            NotReplayed::NotEnded => skip::NOT_ENDED,
            NotReplayed::NotReplayable => skip::TASK_NOT_REPLAYABLE,
        }
    }
}

impl From<NotReplayed> for ApiError {
    fn from(refusal: NotReplayed) -> Self {
        match refusal {
            NotReplayed::NotEnded => ApiError::TaskNotEnded,
            NotReplayed::NotReplayable => ApiError::TaskNotReplayable,
        }
    }
}

/// The create body a replay of `source` is: its request, model, step and owner (its run, or
/// its scope and usage subject), its scope terms with `recompute`, and `effect_key`. No callback
/// (the original's are not carried over) and no delivery (a replay runs now).
pub(crate) fn replay_body(
    source: &ReplaySource,
    effect_key: &str,
    recompute: bool,
) -> Result<Value, NotReplayed> {
    let task = &source.task;
    if !task.status.is_terminal() {
        return Err(NotReplayed::NotEnded);
    }
    let mut body = json!({
        "stepKey": task.step_key,
        "effectKey": effect_key,
        "modelId": task.model_id,
        "request": task.request,
    });
    match (task.run_id, &task.scope_id) {
        (Some(run_id), _) => body["runId"] = json!(run_id),
        (None, Some(scope_id)) => {
            let mut owner = json!({"scopeId": scope_id});
            if let Some(subject) = &task.usage_subject {
                owner["usageSubject"] = subject.clone();
            }
            body["owner"] = owner;
        }
        (None, None) => return Err(NotReplayed::NotReplayable),
    }
    match (&source.scope_terms, &task.source_id) {
        (Some(terms), _) => {
            let mut scope = terms.clone();
            scope["recompute"] = json!(recompute);
            body["scope"] = scope;
        }
        // Scoped (it has a source) but its terms were not kept: stored before migrations/V33.
        (None, Some(_)) => return Err(NotReplayed::NotReplayable),
        (None, None) => {}
    }
    Ok(body)
}

/// `POST /v1/tasks/{taskId}/replay`: 201 with the new task, 200 with the task its effect key
/// names already (the same replay asked again).
pub async fn replay_task<P>(
    app: &App<P>,
    tenant: &AppId,
    task_id: &str,
    body: &[u8],
) -> Result<Created, ApiError> {
    let asked = ReplayTask::parse(body).map_err(ApiError::Invalid)?;
    let task_id = TaskId::parse(task_id).ok_or(ApiError::NotFound)?.uuid();
    let source = {
        let client = store::client(&app.pool).await?;
        store::replay_sources(&client, tenant.as_str(), &[task_id]).await?.pop().ok_or(ApiError::NotFound)?
    };
    let key = asked.effect_key.unwrap_or_else(|| derived_replay_key(task_id));
    let body = replay_body(&source, key.as_str(), asked.recompute)?;
    Box::pin(crate::create::create_replay(app, tenant, &body, task_id, None, false)).await
}

/// `GET /v1/tasks/{taskId}/replays`: the oldest [`HISTORY_ITEMS_MAX`], with `more`.
pub async fn task_replays<P>(app: &App<P>, tenant: &AppId, task: &str) -> Result<TaskReplays, ApiError> {
    let task_id = TaskId::parse(task).ok_or(ApiError::NotFound)?.uuid();
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = store::client(&app.pool).await?;
    let mut replays = store::task_replays(&client, tenant.as_str(), task_id, HISTORY_ITEMS_MAX + 1)
        .await?
        .ok_or(ApiError::NotFound)?;
    let more = replays.len() > HISTORY_ITEMS_MAX;
    replays.truncate(HISTORY_ITEMS_MAX);
    Ok(TaskReplays { replays, more })
}
