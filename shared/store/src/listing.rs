//! Keyset pages of a run's or a scope's tasks (`sql/listing/`), plain or narrowed by kind, model
//! or creation time (a bounded walk).

use tokio_postgres::types::ToSql;
use uuid::Uuid;

use aitasks_contracts::{ListTasks, TaskFilter, TaskStatus, TASK_SCAN_MAX};

use crate::error::StoreResult;
use crate::model::ListedTask;
use crate::pool::GenericClient;
use crate::queries::{TASKS_OF_RUN, TASKS_OF_RUN_FILTERED, TASKS_OF_SCOPE, TASKS_OF_SCOPE_FILTERED};
use crate::statement::Param;

/// Up to `limit` tasks of this application (their requests and outputs as stored text:
/// [`ListedTask`]), run or scope, in id (creation) order after `after`,
/// optionally of one status. One round trip.
pub async fn list_tasks(
    client: &impl GenericClient,
    app_id: &str,
    filter: &TaskFilter,
    status: Option<TaskStatus>,
    after: Option<Uuid>,
    limit: usize,
) -> StoreResult<Vec<ListedTask>> {
    let after = after.unwrap_or(Uuid::nil());
    let status = status.map(TaskStatus::as_str);
    let limit = limit as i64;
    let rows = match filter {
        TaskFilter::Run(run_id) => {
            let statement = client.prepare_cached(TASKS_OF_RUN.text()).await?;
            let params = TASKS_OF_RUN.bind(&[
                ("run_id", run_id),
                ("app_id", &app_id),
                ("after", &after),
                ("status", &status),
                ("limit", &limit),
            ])?;
            client.query(&statement, &params).await?
        }
        TaskFilter::Scope(scope_id) => {
            let statement = client.prepare_cached(TASKS_OF_SCOPE.text()).await?;
            let params = TASKS_OF_SCOPE.bind(&[
                ("app_id", &app_id),
                ("scope_id", scope_id),
                ("after", &after),
                ("status", &status),
                ("limit", &limit),
            ])?;
            client.query(&statement, &params).await?
        }
    };
    rows.iter().map(ListedTask::from_row).collect()
}

/// A page of a listing narrowed by kind, model or creation time, and where the walk that
/// found it stopped.
#[derive(Debug)]
pub struct NarrowedTasks {
    pub tasks: Vec<ListedTask>,
    /// The last task looked at, when the walk stopped at its bound ([`TASK_SCAN_MAX`] tasks)
    /// rather than at the end of the run's or scope's tasks: the next page starts after it.
    pub walk_end: Option<Uuid>,
}

/// Up to `listing.limit` tasks of this application, run or scope, after `listing.after`,
/// narrowed by every filter of `listing` (status, kind, model, creation time). At most
/// [`TASK_SCAN_MAX`] tasks are looked at: when the filters keep fewer than a page of them, the
/// page is short and `walk_end` says where the next one starts. One round trip.
pub async fn list_tasks_narrowed(
    client: &impl GenericClient,
    app_id: &str,
    listing: &ListTasks,
) -> StoreResult<NarrowedTasks> {
    let after = listing.after.unwrap_or(Uuid::nil());
    let status = listing.status.map(TaskStatus::as_str);
    let kind = listing.kind.map(|kind| kind.as_str());
    let limit = listing.limit as i64;
    let examine_max = TASK_SCAN_MAX as i64;
    let filters: [Param<'_>; 8] = [
        ("app_id", &app_id),
        ("after", &after),
        ("status", &status),
        ("kind", &kind),
        ("model_id", &listing.model_id),
        ("created_after", &listing.created_after),
        ("created_before", &listing.created_before),
        ("limit", &limit),
    ];
    let rows = match &listing.filter {
        TaskFilter::Run(run_id) => {
            let statement = client.prepare_cached(TASKS_OF_RUN_FILTERED.text()).await?;
            let mut named = filters.to_vec();
            named.extend([("run_id", run_id as &(dyn ToSql + Sync)), ("examine_max", &examine_max as _)]);
            client.query(&statement, &TASKS_OF_RUN_FILTERED.bind(&named)?).await?
        }
        TaskFilter::Scope(scope_id) => {
            let statement = client.prepare_cached(TASKS_OF_SCOPE_FILTERED.text()).await?;
            let mut named = filters.to_vec();
            named.extend([("scope_id", scope_id as &(dyn ToSql + Sync)), ("examine_max", &examine_max as _)]);
            client.query(&statement, &TASKS_OF_SCOPE_FILTERED.bind(&named)?).await?
        }
    };
    let mut tasks = Vec::with_capacity(rows.len());
    for row in &rows {
        if row.try_get::<_, Option<Uuid>>("id")?.is_some() {
            tasks.push(ListedTask::from_row(row)?);
        }
    }
    let (last_examined, examined): (Option<Uuid>, i64) = match rows.first() {
        Some(row) => (row.try_get("last_examined")?, row.try_get("examined")?),
        None => (None, 0),
    };
    let walk_end = if examined >= examine_max { last_examined } else { None };
    Ok(NarrowedTasks { tasks, walk_end })
}
