//! The HTTP API's operations, independent of the event shape they arrive in. The tenant is the
//! verified `app_id` claim, never anything in the body. Checks run in the contract's order:
//! body (400), size (413), model (400), run (404/409), existing effect key (200), admission (429).

use std::time::{Duration, Instant};

use aitasks_contracts::{
    parse_json, AppId, CreateRun, EffectKey, IdempotencyKey, ListQuery, ListTasks, ReadCost, Release, RunId,
    RunProgress, TaskId, ANSWER_MAX_BYTES, ID_MAX_CHARS, MAX_WAIT_SECONDS,
};
use aitasks_store::{self as store, CreatedRun, NewRun, Run, SourceRef, Task};
use serde_json::json;

use crate::answers::TaskAnswer;
use crate::api_error::ApiError;
use crate::app::App;
pub use crate::create::{create_many, create_task};

/// A long poll looks again after 100 ms, then backs off to one look a second.
const WAIT_FIRST_POLL: Duration = Duration::from_millis(100);
const WAIT_LAST_POLL: Duration = Duration::from_secs(1);

/// A path's id: one that is not a UUID names nothing, the same answer as a missing one.
fn path_id<T>(text: &str, parse: fn(&str) -> Option<T>) -> Result<T, ApiError> {
    parse(text).ok_or(ApiError::NotFound)
}

fn check_key(name: &str, value: &str, max: usize) -> Result<(), ApiError> {
    let length = value.chars().count();
    if length == 0 || length > max || value.contains('\0') {
        return Err(ApiError::invalid(name, &format!("must be 1 to {max} characters without NUL")));
    }
    Ok(())
}

async fn client<P>(app: &App<P>) -> Result<store::Client, ApiError> {
    Ok(store::client(&app.pool).await?)
}

/// `POST /v1/runs`: a new run, or with an `Idempotency-Key` (the header's bytes) the tenant's
/// run of that key when it has one and the same body; the same key with another body is
/// refused, 422.
pub async fn create_run<P>(
    app: &App<P>,
    tenant: &AppId,
    body: &[u8],
    idempotency_key: Option<&[u8]>,
) -> Result<CreatedRun, ApiError> {
    let parsed = parse_json(body).and_then(|v| CreateRun::parse(&v)).map_err(ApiError::Invalid)?;
    let key = ApiError::idempotency_key(idempotency_key)?;
    let actor = parsed.actor_user_id.map(|user_id| json!({"userId": user_id}));
    let client = client(app).await?;
    let new = NewRun {
        app_id: tenant.as_str().to_owned(),
        scope_id: parsed.scope_id,
        actor,
        idempotency_key: key.map(IdempotencyKey::into_string),
    };
    let created = store::create_run(&client, &new).await?;
    if let CreatedRun::Existing(run) = &created {
        if run.scope_id != new.scope_id || run.actor != new.actor {
            return Err(ApiError::IdempotencyKeyReused);
        }
    }
    Ok(created)
}

/// `GET /v1/runs/{runId}`.
pub async fn get_run<P>(app: &App<P>, tenant: &AppId, run_id: &str) -> Result<Run, ApiError> {
    let run_id = path_id(run_id, RunId::parse)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = client(app).await?;
    store::get_run(&client, tenant.as_str(), run_id.uuid()).await?.ok_or(ApiError::NotFound)
}

/// `GET /v1/runs/{runId}/progress`: the run's tasks counted by status now (over its first
/// `RUN_PROGRESS_COUNTED_MAX`).
pub async fn run_progress<P>(app: &App<P>, tenant: &AppId, run_id: &str) -> Result<RunProgress, ApiError> {
    let run_id = path_id(run_id, RunId::parse)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Count).await?;
    let client = client(app).await?;
    store::run_progress(&client, tenant.as_str(), run_id.uuid()).await?.ok_or(ApiError::NotFound)
}

/// `POST /v1/runs/{runId}/cancel`: queued tasks end `canceled`, running ones are aborted. The
/// run is canceled before the answer; its tasks are reached in bounded pages for at most
/// `request_work`, and the sweeper finishes a run bigger than that.
pub async fn cancel_run<P>(app: &App<P>, tenant: &AppId, run_id: &str) -> Result<Run, ApiError> {
    let run_id = path_id(run_id, RunId::parse)?;
    let started = Instant::now();
    let client = client(app).await?;
    let run = store::cancel_run(&client, tenant.as_str(), run_id.uuid()).await?.ok_or(ApiError::NotFound)?;
    let config = &app.settings.runtime;
    loop {
        let page = store::cancel_run_tasks(&client, run.id, config.request_page).await?;
        let done = page.touched() < config.request_page;
        app.publish(page.ended).await;
        if done {
            store::finish_run_cancel(&client, run.id).await?;
            break;
        }
        if started.elapsed() >= config.request_work {
            tracing::info!(run_id = %run.id, "the run's cancel continues in the sweeper");
            break;
        }
    }
    Ok(run)
}

/// `GET /v1/tasks/{taskId}?wait=S`: holds until the task is terminal or `wait` has passed.
pub async fn get_task<P>(
    app: &App<P>,
    tenant: &AppId,
    task_id: &str,
    wait: Duration,
) -> Result<Task, ApiError> {
    let task_id = path_id(task_id, TaskId::parse)?;
    // One charge for the whole wait: its later looks are a primary-key read a second at most.
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let until = Instant::now() + wait.min(Duration::from_secs(MAX_WAIT_SECONDS));
    let mut pause = WAIT_FIRST_POLL;
    loop {
        // A connection per look, given back before the pause: a waiting caller holds none.
        let task = {
            let client = client(app).await?;
            store::get_task(&client, tenant.as_str(), task_id.uuid()).await?.ok_or(ApiError::NotFound)?
        };
        let now = Instant::now();
        if task.status.is_terminal() || now >= until {
            return Ok(task);
        }
        tokio::time::sleep(pause.min(until - now)).await;
        pause = (pause * 2).min(WAIT_LAST_POLL);
    }
}

/// Parse the `wait` query parameter: seconds, clamped to 0..=20.
pub fn parse_wait(value: Option<&str>) -> Result<Duration, ApiError> {
    let Some(text) = value else { return Ok(Duration::ZERO) };
    let seconds: f64 =
        text.trim().parse().map_err(|_| ApiError::invalid("wait", "must be a number of seconds"))?;
    if !seconds.is_finite() {
        return Err(ApiError::invalid("wait", "must be a number of seconds"));
    }
    Ok(Duration::from_secs_f64(seconds.clamp(0.0, MAX_WAIT_SECONDS as f64)))
}

/// `GET /v1/tasks?effectKey=K`.
pub async fn get_task_by_effect_key<P>(
    app: &App<P>,
    tenant: &AppId,
    effect_key: Option<&str>,
) -> Result<Task, ApiError> {
    let effect_key = effect_key.ok_or_else(|| ApiError::invalid("effectKey", "is required"))?;
    let effect_key = EffectKey::parse(effect_key).ok_or_else(|| {
        let max = aitasks_contracts::EFFECT_KEY_MAX_CHARS;
        ApiError::invalid("effectKey", &format!("must be 1 to {max} characters without NUL"))
    })?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = client(app).await?;
    store::get_task_by_effect_key(&client, tenant.as_str(), effect_key.as_str())
        .await?
        .ok_or(ApiError::NotFound)
}

/// A page of tasks and where the next one starts (`None`: this was the last page).
#[derive(Debug, Clone)]
pub struct TaskPage {
    /// Their requests and outputs as the store keeps their text.
    pub tasks: Vec<store::ListedTask>,
    pub next: Option<uuid::Uuid>,
}

/// `{"tasks":[` `],"next":"<uuid>"}` around a page's tasks, as Lambda's response carries it.
const PAGE_FRAME_BYTES: usize = 80;

/// `GET /v1/tasks?runId=…|scopeId=…&status=…&after=…&limit=…`: keyset pages in creation order.
/// A page ends early once its answer would pass [`ANSWER_MAX_BYTES`], counted as Lambda's
/// response carries it (each task as the answer writes it, escaped into the body string), so it
/// always fits Lambda's response limit; `next` then points past the last task it holds. A page
/// holds at least one task, and a task's answer (a request and an output of 100 kB each) is far
/// below the limit.
pub async fn list_tasks<P>(app: &App<P>, tenant: &AppId, query: ListQuery<'_>) -> Result<TaskPage, ApiError> {
    let listing = ListTasks::parse(query).map_err(ApiError::Invalid)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Page).await?;
    let client = client(app).await?;
    let store::ListedTasks { tasks: found, walk_end } =
        store::list_tasks(&client, tenant.as_str(), &listing).await?;
    let full = found.len() == listing.limit;
    let (mut tasks, mut bytes) = (Vec::with_capacity(found.len()), PAGE_FRAME_BYTES);
    for task in found {
        // The task's answer and the comma before it.
        bytes += aitasks_contracts::escaped_json_bytes(&TaskAnswer::from(&task)) + 1;
        if bytes > ANSWER_MAX_BYTES && !tasks.is_empty() {
            let next = tasks.last().map(|last: &store::ListedTask| last.task.id);
            return Ok(TaskPage { tasks, next });
        }
        tasks.push(task);
    }
    // A full page goes on after its last task; a short filtered page whose walk stopped at its
    // bound goes on after the last task it looked at.
    let next = if full { tasks.last().map(|last| last.task.id) } else { walk_end };
    Ok(TaskPage { tasks, next })
}

/// `POST /v1/tasks/{taskId}/cancel`: a queued task ends `canceled`, a running one is aborted
/// within a cancel poll, a terminal one stays as it is.
pub async fn cancel_task<P>(app: &App<P>, tenant: &AppId, task_id: &str) -> Result<Task, ApiError> {
    let task_id = path_id(task_id, TaskId::parse)?;
    let client = client(app).await?;
    let outcome =
        store::request_cancel(&client, tenant.as_str(), task_id.uuid()).await?.ok_or(ApiError::NotFound)?;
    drop(client);
    Ok(match outcome {
        store::CancelRequest::Canceled(settled) => {
            app.publish(vec![settled.event]).await;
            settled.task
        }
        store::CancelRequest::Flagged(task) | store::CancelRequest::AlreadyTerminal(task) => task,
    })
}

/// `POST /v1/tasks/release`.
pub async fn release<P>(app: &App<P>, tenant: &AppId, body: &[u8]) -> Result<bool, ApiError> {
    let parsed = parse_json(body).and_then(|v| Release::parse(&v)).map_err(ApiError::Invalid)?;
    let client = client(app).await?;
    Ok(store::release(&client, tenant.as_str(), &parsed.scope_id, parsed.effect_key.as_str()).await?)
}

/// What a delete request did: `more` when it stopped at its time limit with rows left (the
/// caller repeats the request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Deleted {
    pub deleted: u64,
    pub more: bool,
}

/// `DELETE /v1/scopes/{scopeId}/tasks?sourceId=S`: in bounded pages, each serialized with the
/// scope's creates, for at most `request_work`.
pub async fn delete_scope_tasks<P>(
    app: &App<P>,
    tenant: &AppId,
    scope_id: &str,
    source_id: Option<&str>,
) -> Result<Deleted, ApiError> {
    check_key("scopeId", scope_id, ID_MAX_CHARS)?;
    if let Some(source_id) = source_id {
        check_key("sourceId", source_id, ID_MAX_CHARS)?;
    }
    let started = Instant::now();
    let config = &app.settings.runtime;
    let mut client = client(app).await?;
    let mut deleted = 0;
    loop {
        let n =
            store::delete_owned_page(&mut client, tenant.as_str(), scope_id, source_id, config.request_page)
                .await?;
        deleted += n;
        if n < config.request_page as u64 {
            return Ok(Deleted { deleted, more: false });
        }
        if started.elapsed() >= config.request_work {
            return Ok(Deleted { deleted, more: true });
        }
    }
}

/// `GET /v1/unreleased-sources?task=&afterScope=&afterSource=`.
pub async fn unreleased_sources<P>(
    app: &App<P>,
    tenant: &AppId,
    step_key: Option<&str>,
    after_scope: Option<&str>,
    after_source: Option<&str>,
) -> Result<(Vec<SourceRef>, Option<SourceRef>), ApiError> {
    if let Some(step_key) = step_key {
        check_key("task", step_key, aitasks_contracts::STEP_KEY_MAX_CHARS)?;
    }
    let after = match (after_scope, after_source) {
        (None, None) => None,
        (Some(scope_id), source_id) => {
            check_key("afterScope", scope_id, ID_MAX_CHARS)?;
            if let Some(source_id) = source_id {
                check_key("afterSource", source_id, ID_MAX_CHARS)?;
            }
            Some(SourceRef {
                scope_id: scope_id.to_owned(),
                source_id: source_id.unwrap_or_default().to_owned(),
            })
        }
        (None, Some(_)) => return Err(ApiError::invalid("afterScope", "is required with afterSource")),
    };
    app.reads.charge(&app.pool, tenant, ReadCost::Page).await?;
    let client = client(app).await?;
    Ok(store::unreleased_sources(&client, tenant.as_str(), step_key, after.as_ref()).await?)
}
