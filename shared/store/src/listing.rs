//! Keyset pages of a run's or a scope's tasks (`sql/listing/`).

use uuid::Uuid;

use aitasks_contracts::{TaskFilter, TaskStatus};

use crate::error::StoreResult;
use crate::model::ListedTask;
use crate::pool::GenericClient;
use crate::queries::{LIST_TASKS_OF_RUN, LIST_TASKS_OF_SCOPE};

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
            let statement = client.prepare_cached(LIST_TASKS_OF_RUN.text()).await?;
            let params = LIST_TASKS_OF_RUN.bind(&[
                ("run_id", run_id),
                ("app_id", &app_id),
                ("after", &after),
                ("status", &status),
                ("limit", &limit),
            ])?;
            client.query(&statement, &params).await?
        }
        TaskFilter::Scope(scope_id) => {
            let statement = client.prepare_cached(LIST_TASKS_OF_SCOPE.text()).await?;
            let params = LIST_TASKS_OF_SCOPE.bind(&[
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
