//! The read API for history (docs/api.md, "History"): a tenant's runs with their task counts, a
//! task's attempts, completion events, callbacks and provider batch, and the tenant's summary.
//! Every answer is bounded and charged to the tenant's read rate (`read_rate`); another tenant's
//! run or task is a 404 exactly as a missing one.

use aitasks_contracts::{
    Activity, ActivityQuery, ActivityWindow, AppId, ListRuns, ReadCost, RunPage, RunsQuery, SummaryQuery,
    SummaryWindow, TaskAttempts, TaskBatch, TaskCallbacks, TaskEvents, TaskId, TenantSummary,
    HISTORY_ITEMS_MAX,
};
use aitasks_store as store;

use crate::api_error::ApiError;
use crate::app::App;

async fn client<P>(app: &App<P>) -> Result<store::Client, ApiError> {
    Ok(store::client(&app.pool).await?)
}

/// A path's task id: one that is not a UUID names nothing, the same answer as a missing one.
fn task_id(text: &str) -> Result<uuid::Uuid, ApiError> {
    TaskId::parse(text).map(|id| id.uuid()).ok_or(ApiError::NotFound)
}

/// `GET /v1/runs?status=&createdAfter=&createdBefore=&after=&limit=`: keyset pages in creation
/// order. `next` is the page's last run when the page is full, or the last run looked at when the
/// page's filters kept fewer than a page of the runs one answer looks at (store::list_runs).
pub async fn list_runs<P>(app: &App<P>, tenant: &AppId, query: RunsQuery<'_>) -> Result<RunPage, ApiError> {
    let listing = ListRuns::parse(query).map_err(ApiError::Invalid)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Wide).await?;
    let client = client(app).await?;
    let page = store::list_runs(&client, tenant.as_str(), &listing).await?;
    Ok(RunPage { runs: page.runs, next: page.next })
}

/// `GET /v1/tasks/{taskId}/attempts`: the oldest [`HISTORY_ITEMS_MAX`] ended attempts, then the
/// one running now (a running task's last attempt is never left out).
pub async fn task_attempts<P>(app: &App<P>, tenant: &AppId, task: &str) -> Result<TaskAttempts, ApiError> {
    let task_id = task_id(task)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = client(app).await?;
    let found = store::task_attempts(&client, tenant.as_str(), task_id, HISTORY_ITEMS_MAX + 1)
        .await?
        .ok_or(ApiError::NotFound)?;
    let mut attempts = found.ended;
    let more = attempts.len() > HISTORY_ITEMS_MAX;
    attempts.truncate(HISTORY_ITEMS_MAX);
    attempts.extend(found.running.filter(|_| !more));
    Ok(TaskAttempts { attempts, more })
}

/// `GET /v1/summary?createdAfter=&createdBefore=`: the tenant's tasks created in the window (the
/// last 7 days by default, at most 31), by status, and their usage by day and model.
pub async fn summary<P>(
    app: &App<P>,
    tenant: &AppId,
    query: SummaryQuery<'_>,
) -> Result<TenantSummary, ApiError> {
    let window = SummaryWindow::parse(query, chrono::Utc::now()).map_err(ApiError::Invalid)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Wide).await?;
    let client = client(app).await?;
    Ok(store::summary(&client, tenant.as_str(), &window).await?)
}

/// `GET /v1/activity?bucket=&from=&to=`: the tenant's activity in time buckets (the last 24
/// hours by the hour by default), from the rows migrations/V40 counts into.
pub async fn activity<P>(
    app: &App<P>,
    tenant: &AppId,
    query: ActivityQuery<'_>,
) -> Result<Activity, ApiError> {
    let window = ActivityWindow::parse(query, chrono::Utc::now()).map_err(ApiError::Invalid)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Series).await?;
    let client = client(app).await?;
    Ok(store::activity(&client, tenant.as_str(), &window).await?)
}

/// `GET /v1/tasks/{taskId}/events`: the oldest [`HISTORY_ITEMS_MAX`].
pub async fn task_events<P>(app: &App<P>, tenant: &AppId, task: &str) -> Result<TaskEvents, ApiError> {
    let task_id = task_id(task)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = client(app).await?;
    let mut events = store::task_events(&client, tenant.as_str(), task_id, HISTORY_ITEMS_MAX + 1)
        .await?
        .ok_or(ApiError::NotFound)?;
    let more = events.len() > HISTORY_ITEMS_MAX;
    events.truncate(HISTORY_ITEMS_MAX);
    Ok(TaskEvents { events, more })
}

/// `GET /v1/tasks/{taskId}/callbacks`: the oldest [`HISTORY_ITEMS_MAX`], never a token.
pub async fn task_callbacks<P>(app: &App<P>, tenant: &AppId, task: &str) -> Result<TaskCallbacks, ApiError> {
    let task_id = task_id(task)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = client(app).await?;
    let mut callbacks = store::task_callbacks(&client, tenant.as_str(), task_id, HISTORY_ITEMS_MAX + 1)
        .await?
        .ok_or(ApiError::NotFound)?;
    let more = callbacks.len() > HISTORY_ITEMS_MAX;
    callbacks.truncate(HISTORY_ITEMS_MAX);
    Ok(TaskCallbacks { callbacks, more })
}

/// `GET /v1/tasks/{taskId}/batch`: 404 `NOT_IN_BATCH` for a task of the tenant in no batch.
pub async fn task_batch<P>(app: &App<P>, tenant: &AppId, task: &str) -> Result<TaskBatch, ApiError> {
    let task_id = task_id(task)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = client(app).await?;
    match store::task_batch(&client, tenant.as_str(), task_id).await? {
        store::BatchOfTask::Batch(batch) => Ok(batch),
        store::BatchOfTask::NoBatch => Err(ApiError::NotInBatch),
        store::BatchOfTask::NoTask => Err(ApiError::NotFound),
    }
}
