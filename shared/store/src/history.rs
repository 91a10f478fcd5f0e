//! The history of an application's runs and tasks, as the read API shows it (`sql/history/`):
//! runs with their task counts, a task's completion events, its callbacks (never a token) and
//! the provider batch it was sent in. Another application's run or task is `None`, exactly as a
//! missing one. A task's attempts are in `attempts`, the application's summary in `summary`.

use aitasks_contracts::limits::{RUN_SCAN_MAX, RUN_TASKS_COUNTED_MAX};
use aitasks_contracts::{ListRuns, ListedRun, RunState, TaskBatch, TaskCallback, TaskCounts, TaskEvent};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::pool::GenericClient;
use crate::queries::{LIST_RUNS, TASK_BATCH, TASK_CALLBACKS, TASK_EVENTS};

/// Up to `listing.limit` runs of this application after `listing.after`, in id (creation) order,
/// each with its tasks counted by status (over a run's first [`RUN_TASKS_COUNTED_MAX`] tasks, and
/// `more` past them), and where the next page starts. At most [`RUN_SCAN_MAX`] runs are looked at
/// for a page: when the filters keep fewer than `listing.limit` of them, the page is short and
/// `next` is the last run looked at. One round trip.
pub async fn list_runs(
    client: &impl GenericClient,
    app_id: &str,
    listing: &ListRuns,
) -> StoreResult<RunsOfApp> {
    let statement = client.prepare_cached(LIST_RUNS.text()).await?;
    let after = listing.after.unwrap_or(Uuid::nil());
    let state = listing.status.map(RunState::as_str);
    let limit = listing.limit as i64;
    let counted_max = RUN_TASKS_COUNTED_MAX as i64;
    let examine_max = RUN_SCAN_MAX as i64;
    let params = LIST_RUNS.bind(&[
        ("app_id", &app_id),
        ("after", &after),
        ("state", &state),
        ("scope_id", &listing.scope_id),
        ("created_after", &listing.created_after),
        ("created_before", &listing.created_before),
        ("limit", &limit),
        ("counted_max", &counted_max),
        ("examine_max", &examine_max),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let mut runs = Vec::with_capacity(rows.len());
    for row in &rows {
        if row.try_get::<_, Option<Uuid>>("id")?.is_some() {
            runs.push(listed_run(row)?);
        }
    }
    let (last_examined, examined): (Option<Uuid>, i64) = match rows.first() {
        Some(row) => (row.try_get("last_examined")?, row.try_get("examined")?),
        None => (None, 0),
    };
    let next = if runs.len() == listing.limit {
        runs.last().map(|run| run.id)
    } else if examined >= examine_max {
        last_examined
    } else {
        None
    };
    Ok(RunsOfApp { runs, next })
}

/// A page of runs and where the next one starts (`None`: this was the last).
#[derive(Debug)]
pub struct RunsOfApp {
    pub runs: Vec<ListedRun>,
    pub next: Option<Uuid>,
}

fn count(row: &Row, name: &str) -> StoreResult<u64> {
    let n: i64 = row.try_get(name)?;
    Ok(n.max(0) as u64)
}

fn listed_run(row: &Row) -> StoreResult<ListedRun> {
    let text: &str = row.try_get("state")?;
    let state = RunState::parse(text).ok_or_else(|| StoreError::Corrupt(format!("run state {text:?}")))?;
    Ok(ListedRun {
        id: row.try_get("id")?,
        app_id: row.try_get("app_id")?,
        scope_id: row.try_get("scope_id")?,
        state,
        actor: row.try_get("actor")?,
        cancel_requested_at: row.try_get("cancel_requested_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        tasks: TaskCounts {
            queued: count(row, "queued")?,
            running: count(row, "running")?,
            succeeded: count(row, "succeeded")?,
            failed: count(row, "failed")?,
            canceled: count(row, "canceled")?,
            more: row.try_get("more")?,
        },
    })
}

/// Up to `limit` of a task's completion events, oldest first; `None` when the task is not this
/// application's. One round trip.
pub async fn task_events(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
    limit: usize,
) -> StoreResult<Option<Vec<TaskEvent>>> {
    let statement = client.prepare_cached(TASK_EVENTS.text()).await?;
    let limit = limit as i64;
    let params = TASK_EVENTS.bind(&[("task_id", &task_id), ("app_id", &app_id), ("limit", &limit)])?;
    let rows = client.query(&statement, &params).await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut events = Vec::with_capacity(rows.len());
    for row in &rows {
        let id: Option<i64> = row.try_get("event_id")?;
        if id.is_none() {
            continue;
        }
        let created_at: Option<DateTime<Utc>> = row.try_get("created_at")?;
        events.push(TaskEvent {
            kind: row.try_get::<_, Option<String>>("type")?.unwrap_or_default(),
            status: row.try_get::<_, Option<String>>("status")?.unwrap_or_default(),
            created_at: created_at.ok_or_else(|| StoreError::Corrupt("an event without its time".into()))?,
            delivered_at: row.try_get("delivered_at")?,
        });
    }
    Ok(Some(events))
}

/// Up to `limit` of a task's callbacks, oldest first, without their tokens; `None` when the
/// task is not this application's. One round trip.
pub async fn task_callbacks(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
    limit: usize,
) -> StoreResult<Option<Vec<TaskCallback>>> {
    let statement = client.prepare_cached(TASK_CALLBACKS.text()).await?;
    let limit = limit as i64;
    let params = TASK_CALLBACKS.bind(&[("task_id", &task_id), ("app_id", &app_id), ("limit", &limit)])?;
    let rows = client.query(&statement, &params).await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut callbacks = Vec::with_capacity(rows.len());
    for row in &rows {
        let (Some(kind), Some(state), Some(attached_at), Some(heartbeat_at), Some(tries)) = (
            row.try_get::<_, Option<String>>("kind")?,
            row.try_get::<_, Option<String>>("state")?,
            row.try_get::<_, Option<DateTime<Utc>>>("created_at")?,
            row.try_get::<_, Option<DateTime<Utc>>>("heartbeat_at")?,
            row.try_get::<_, Option<i32>>("tries")?,
        ) else {
            continue;
        };
        callbacks.push(TaskCallback {
            kind,
            state,
            attached_at,
            heartbeat_at,
            due_at: row.try_get("due_at")?,
            ended_at: row.try_get("ended_at")?,
            tries: tries.max(0) as u32,
        });
    }
    Ok(Some(callbacks))
}

/// Where a task of this application stands with provider batches.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOfTask {
    /// Not this application's task, or no task at all.
    NoTask,
    /// The task was never sent in a batch (or its batch was pruned).
    NoBatch,
    Batch(TaskBatch),
}

/// The provider batch a task of this application was sent in. One round trip.
pub async fn task_batch(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
) -> StoreResult<BatchOfTask> {
    let statement = client.prepare_cached(TASK_BATCH.text()).await?;
    let params = TASK_BATCH.bind(&[("task_id", &task_id), ("app_id", &app_id)])?;
    let Some(row) = client.query_opt(&statement, &params).await? else {
        return Ok(BatchOfTask::NoTask);
    };
    let Some(id) = row.try_get::<_, Option<Uuid>>("batch_id")? else {
        return Ok(BatchOfTask::NoBatch);
    };
    let corrupt = |what: &str| StoreError::Corrupt(format!("a batch without its {what}"));
    // The batch's count of this tenant's tasks (migrations/V32); the task asked about is one.
    let requests: i32 = row.try_get::<_, Option<i32>>("requests")?.unwrap_or(1);
    let pending: Option<i64> = row.try_get("pending")?;
    Ok(BatchOfTask::Batch(TaskBatch {
        id,
        provider: row.try_get::<_, Option<String>>("provider")?.ok_or_else(|| corrupt("provider"))?,
        provider_batch_id: row.try_get("provider_batch_id")?,
        status: row.try_get::<_, Option<String>>("state")?.ok_or_else(|| corrupt("state"))?,
        outcome: row.try_get("outcome")?,
        requests: requests.max(1) as u32,
        pending: pending.unwrap_or(0).max(0) as u64,
        created_at: row.try_get::<_, Option<DateTime<Utc>>>("created_at")?.ok_or_else(|| corrupt("time"))?,
        submitted_at: row.try_get("submitted_at")?,
        ended_at: row.try_get("ended_at")?,
    }))
}
