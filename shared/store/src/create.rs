//! Creating tasks (`sql/create/`): one (idempotent on `(app, effect key)`), or a bulk create's plain
//! items in one statement; then recording that their messages were sent, after the commit.

use std::collections::HashMap;

use serde_json::Value;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::{new_id, Created, NewTask, RunState, Task, TaskOwner};
use crate::pool::GenericClient;
use crate::queries::{
    EXISTING_BY_KEY, INSERT_ALL, INSERT_APP_TASK, INSERT_RUN_TASK, MARK_POLLERS, OWE_AGAIN,
};
use crate::read::get_task_by_effect_key;
use crate::statement::Param;

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

/// Create every task of `tasks` (all of one application), or find the task its effect key
/// already names, answering item by item in order. Each item stands alone: a missing run is
/// its [`StoreError::RunNotFound`], a canceled one its [`StoreError::RunUnavailable`], and
/// neither touches the others. Two round trips when some keys were taken, one otherwise.
///
/// A task found by its key comes without its request (`null`; a bulk create answers summaries).
///
/// `tasks` must be unscoped and free of quotas (the caller sends the others through
/// [`crate::create_scoped`] and [`crate::create_task_within_quota`], one by one).
pub async fn create_tasks(
    client: &impl GenericClient,
    app_id: &str,
    tasks: &[NewTask],
) -> StoreResult<Vec<StoreResult<Created>>> {
    if tasks.is_empty() {
        return Ok(Vec::new());
    }
    let rows = insert_all(client, app_id, tasks).await?;
    let mut answers: Vec<Option<StoreResult<Created>>> = Vec::with_capacity(tasks.len());
    let mut taken: Vec<usize> = Vec::new();
    for (task, row) in tasks.iter().zip(&rows) {
        let run_state: Option<&str> = row.try_get("run_state")?;
        let inserted: Option<Uuid> = row.try_get("id")?;
        answers.push(match (&task.owner, run_state.map(RunState::parse)) {
            (TaskOwner::Run(_), None) => Some(Err(StoreError::RunNotFound)),
            (TaskOwner::Run(_), Some(state)) if state != Some(RunState::Running) => {
                Some(Err(StoreError::RunUnavailable))
            }
            _ if inserted.is_some() => Some(Task::inserted(task, row).map(Created::New)),
            _ => {
                taken.push(answers.len());
                None
            }
        });
    }
    if !taken.is_empty() {
        let keys: Vec<&str> = taken.iter().map(|&i| tasks[i].effect_key.as_str()).collect();
        let existing = existing_by_key(client, app_id, &keys).await?;
        for i in taken {
            // A key given twice in the bulk create: the later item finds the earlier one's task too.
            answers[i] = Some(match existing.get(&tasks[i].effect_key) {
                Some(task) => Ok(Created::Existing(task.clone())),
                // Deleted between the insert and the read: the single path tries again.
                None => create_task(client, &tasks[i]).await,
            });
        }
    }
    answers
        .into_iter()
        .map(|answer| {
            answer.ok_or_else(|| StoreError::Corrupt("a bulk create's item without an answer".into()))
        })
        .collect()
}

/// The insert of every item, one row back per item in item order.
async fn insert_all(
    client: &impl GenericClient,
    app_id: &str,
    tasks: &[NewTask],
) -> StoreResult<Vec<tokio_postgres::Row>> {
    let ids: Vec<Uuid> = tasks.iter().map(|_| new_id()).collect();
    let (mut run_ids, mut scope_ids, mut usage_subjects) = (Vec::new(), Vec::new(), Vec::new());
    for task in tasks {
        match &task.owner {
            TaskOwner::Run(run_id) => {
                run_ids.push(Some(*run_id));
                scope_ids.push(None);
                usage_subjects.push(None);
            }
            TaskOwner::Application { scope_id, usage_subject } => {
                run_ids.push(None);
                scope_ids.push(Some(scope_id.as_str()));
                usage_subjects.push(usage_subject.as_ref());
            }
        }
    }
    let column = |get: fn(&NewTask) -> &str| -> Vec<&str> { tasks.iter().map(get).collect() };
    let step_keys = column(|t| &t.step_key);
    let effect_keys = column(|t| &t.effect_key);
    let kinds = column(|t| &t.kind);
    let input_hashes = column(|t| &t.input_hash);
    let model_ids = column(|t| &t.model_id);
    let requests: Vec<&Value> = tasks.iter().map(|t| &t.request).collect();
    let model_refs: Vec<Option<&Value>> = tasks.iter().map(|t| t.model_ref.as_ref()).collect();
    let config_hashes: Vec<Option<&str>> = tasks.iter().map(|t| t.model_config_hash.as_deref()).collect();
    let max_attempts: Vec<i32> = tasks.iter().map(|t| t.max_attempts).collect();
    let trace_headers: Vec<Option<&str>> = tasks.iter().map(|t| t.trace_header.as_deref()).collect();
    let deferred_windows: Vec<Option<i64>> = tasks.iter().map(|t| t.deferred_window_ms).collect();
    let awaiting: Vec<bool> = tasks.iter().map(|t| t.awaiting_batch).collect();
    let has_pollers: Vec<bool> = tasks.iter().map(|t| t.has_poller).collect();
    let statement = client.prepare_cached(INSERT_ALL.text()).await?;
    let params = INSERT_ALL.bind(&[
        ("app_id", &app_id),
        ("ids", &ids),
        ("run_ids", &run_ids),
        ("scope_ids", &scope_ids),
        ("usage_subjects", &usage_subjects),
        ("step_keys", &step_keys),
        ("effect_keys", &effect_keys),
        ("kinds", &kinds),
        ("requests", &requests),
        ("input_hashes", &input_hashes),
        ("model_ids", &model_ids),
        ("model_refs", &model_refs),
        ("model_config_hashes", &config_hashes),
        ("max_attempts", &max_attempts),
        ("trace_headers", &trace_headers),
        ("deferred_windows_ms", &deferred_windows),
        ("awaiting_batches", &awaiting),
        ("has_pollers", &has_pollers),
    ])?;
    let rows = client.query(&statement, &params).await?;
    if rows.len() != tasks.len() {
        return Err(StoreError::Corrupt(format!("{} rows for a bulk create of {}", rows.len(), tasks.len())));
    }
    Ok(rows)
}

async fn existing_by_key(
    client: &impl GenericClient,
    app_id: &str,
    keys: &[&str],
) -> StoreResult<HashMap<String, Task>> {
    let statement = client.prepare_cached(EXISTING_BY_KEY.text()).await?;
    let params = EXISTING_BY_KEY.bind(&[("app_id", &app_id), ("effect_keys", &keys)])?;
    let rows = client.query(&statement, &params).await?;
    rows.iter()
        .map(|row| {
            // Without its request (the statement does not read it): a bulk create answers a summary.
            let mut task = Task::from_row_without_documents(row)?;
            task.output = row.try_get("output")?;
            Ok((task.effect_key.clone(), task))
        })
        .collect()
}

/// Record that creates without a callback found these existing tasks: their callers read them,
/// so none is canceled for want of callers (`sql/create/mark_pollers.sql`). One round trip; a
/// task already marked, or ended, is not written.
pub async fn mark_pollers(client: &impl GenericClient, task_ids: &[Uuid]) -> StoreResult<()> {
    if task_ids.is_empty() {
        return Ok(());
    }
    let statement = client.prepare_cached(MARK_POLLERS.text()).await?;
    client.execute(&statement, &MARK_POLLERS.bind(&[("task_ids", &task_ids)])?).await?;
    Ok(())
}

/// New tasks whose messages did not go out (their send failed, or their request failed after the
/// insert): owed again, for the sweeper after its grace (`sql/create/owe_again.sql`); a task a
/// worker touched meanwhile is left alone. Answers how many were owed again.
pub async fn owe_again(client: &impl GenericClient, task_ids: &[Uuid]) -> StoreResult<u64> {
    if task_ids.is_empty() {
        return Ok(0);
    }
    let statement = client.prepare_cached(OWE_AGAIN.text()).await?;
    Ok(client.execute(&statement, &OWE_AGAIN.bind(&[("task_ids", &task_ids)])?).await?)
}
