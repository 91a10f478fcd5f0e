//! Keyset pages of a run's or a scope's tasks (`sql/listing/`): unfiltered, a page read in order;
//! filtered (status, kind, model or creation time), a bounded walk whose page may come short.

use tokio_postgres::types::ToSql;
use uuid::Uuid;

use aitasks_contracts::{ListTasks, TaskFilter, TaskStatus, TASK_SCAN_MAX};

use crate::error::StoreResult;
use crate::model::ListedTask;
use crate::pool::GenericClient;
use crate::queries::{
    LIST_TASKS_NARROWED_OF_RUN, LIST_TASKS_NARROWED_OF_SCOPE, LIST_TASKS_OF_RUN, LIST_TASKS_OF_SCOPE,
};
use crate::statement::Param;

/// A page of a listing, and where the walk that found it stopped.
#[derive(Debug)]
pub struct ListedTasks {
    pub tasks: Vec<ListedTask>,
    /// A filtered listing's last task looked at, when its walk stopped at its bound
    /// ([`TASK_SCAN_MAX`] tasks) rather than at the end of the run's or scope's tasks: the next
    /// page starts after it. Always `None` for an unfiltered listing.
    pub walk_end: Option<Uuid>,
}

/// Up to `listing.limit` tasks of this application (their requests and outputs as stored text:
/// [`ListedTask`]), run or scope, in id (creation) order after `listing.after`. Unfiltered, every
/// task read is answered. Filtered by status, kind, model or creation time
/// ([`ListTasks::narrowed`]), at most [`TASK_SCAN_MAX`] tasks are looked at: when the filters keep
/// fewer than a page of them, the page is short and `walk_end` says where the next one starts. A
/// run that is not this application's lists nothing. One round trip.
pub async fn list_tasks(
    client: &impl GenericClient,
    app_id: &str,
    listing: &ListTasks,
) -> StoreResult<ListedTasks> {
    let after = listing.after.unwrap_or(Uuid::nil());
    let limit = listing.limit as i64;
    if !listing.narrowed() {
        let owner: [Param<'_>; 3] = [("app_id", &app_id), ("after", &after), ("limit", &limit)];
        let rows = match &listing.filter {
            TaskFilter::Run(run_id) => {
                let statement = client.prepare_cached(LIST_TASKS_OF_RUN.text()).await?;
                let mut named = owner.to_vec();
                named.push(("run_id", run_id));
                client.query(&statement, &LIST_TASKS_OF_RUN.bind(&named)?).await?
            }
            TaskFilter::Scope(scope_id) => {
                let statement = client.prepare_cached(LIST_TASKS_OF_SCOPE.text()).await?;
                let mut named = owner.to_vec();
                named.push(("scope_id", scope_id));
                client.query(&statement, &LIST_TASKS_OF_SCOPE.bind(&named)?).await?
            }
        };
        let tasks = rows.iter().map(ListedTask::from_row).collect::<StoreResult<_>>()?;
        return Ok(ListedTasks { tasks, walk_end: None });
    }
    let status = listing.status.map(TaskStatus::as_str);
    let kind = listing.kind.map(|kind| kind.as_str());
    let examine_max = TASK_SCAN_MAX as i64;
    let filters: [Param<'_>; 9] = [
        ("app_id", &app_id),
        ("after", &after),
        ("status", &status),
        ("kind", &kind),
        ("model_id", &listing.model_id),
        ("created_after", &listing.created_after),
        ("created_before", &listing.created_before),
        ("limit", &limit),
        ("examine_max", &examine_max),
    ];
    let rows = match &listing.filter {
        TaskFilter::Run(run_id) => {
            let statement = client.prepare_cached(LIST_TASKS_NARROWED_OF_RUN.text()).await?;
            let mut named = filters.to_vec();
            named.push(("run_id", run_id as &(dyn ToSql + Sync)));
            client.query(&statement, &LIST_TASKS_NARROWED_OF_RUN.bind(&named)?).await?
        }
        TaskFilter::Scope(scope_id) => {
            let statement = client.prepare_cached(LIST_TASKS_NARROWED_OF_SCOPE.text()).await?;
            let mut named = filters.to_vec();
            named.push(("scope_id", scope_id as &(dyn ToSql + Sync)));
            client.query(&statement, &LIST_TASKS_NARROWED_OF_SCOPE.bind(&named)?).await?
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
    Ok(ListedTasks { tasks, walk_end })
}
