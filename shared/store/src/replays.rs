//! Replays (`sql/replays/`): the tasks a replay is made from, with the scope terms their creates
//! gave, and a task's replays as the history route answers them. A replay itself is created by
//! the create path (`create`, `admission`, `tenant_quota`) with `NewTask::replay_of` set; the
//! trigger of migrations/V33 records it in `task_replays`.

use aitasks_contracts::{TaskReplay, TaskStatus};
use serde_json::Value;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::Task;
use crate::params::limit;
use crate::pool::GenericClient;
use crate::queries::{REPLAY_SOURCES, TASK_REPLAYS};

/// A task a replay is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySource {
    pub task: Task,
    /// The scope terms its create gave (`scope` less `recompute`), `None` for an unscoped task
    /// or one stored before migrations/V33.
    pub scope_terms: Option<Value>,
}

/// The tenant's tasks of these ids (at most a page), in id order; another tenant's are left out.
pub async fn replay_sources(
    client: &impl GenericClient,
    app_id: &str,
    task_ids: &[Uuid],
) -> StoreResult<Vec<ReplaySource>> {
    if task_ids.is_empty() {
        return Ok(Vec::new());
    }
    let statement = client.prepare_cached(REPLAY_SOURCES.text()).await?;
    let params = REPLAY_SOURCES.bind(&[("task_ids", &task_ids), ("app_id", &app_id)])?;
    client
        .query(&statement, &params)
        .await?
        .iter()
        .map(|row| Ok(ReplaySource { task: Task::from_row(row)?, scope_terms: row.try_get("scope_terms")? }))
        .collect()
}

/// The oldest `max` replays of the tenant's task, or `None` when it has no such task. One round
/// trip.
pub async fn task_replays(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
    max: usize,
) -> StoreResult<Option<Vec<TaskReplay>>> {
    let statement = client.prepare_cached(TASK_REPLAYS.text()).await?;
    let max = limit(max);
    let params = TASK_REPLAYS.bind(&[("task_id", &task_id), ("app_id", &app_id), ("limit", &max)])?;
    let rows = client.query(&statement, &params).await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut replays = Vec::with_capacity(rows.len());
    for row in &rows {
        let Some(id) = row.try_get::<_, Option<Uuid>>("replay_id")? else { continue };
        let status: &str = row.try_get("status")?;
        replays.push(TaskReplay {
            id,
            status: TaskStatus::parse(status)
                .ok_or_else(|| StoreError::Corrupt(format!("task status {status:?}")))?,
            effect_key: row.try_get("effect_key")?,
            created_at: row.try_get("created_at")?,
            operation_id: row.try_get("operation_id")?,
        });
    }
    Ok(Some(replays))
}
