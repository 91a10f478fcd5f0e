//! Scoped inference: the result cache and admission (DESIGN.md §4), in the create transaction.
//!
//! Admission is serialized per `(app, scope)` with a transaction-scoped advisory lock, never
//! globally. Inside it, one statement reads everything the decision needs (existing effect
//! key, cache hit, the 24 h budgets, the scope's active count, the token bucket) and one
//! statement writes (the application-wide counter, the bucket, the task, its admission row).
//! The application-wide cap is a conditional upsert on a counter row, taken as the last write
//! before commit; it is lowered in the same statement as every transition that ends a scoped
//! task. A refusal rolls everything back: nothing is stored.

use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use crate::model::{settled_from_row, task_columns, Created, NewTask, PendingEvent, Task, TaskOwner};
use crate::pool::Client;
use crate::sql::event_payload;
use crate::tasks::get_task_by_effect_key;
use crate::{StoreError, StoreResult};

/// The limits one create brings (each a positive safe integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionBudget {
    pub burst: i64,
    pub tasks_per_minute: i64,
    pub max_steps_per_source: i64,
    pub sources_per_24_hours: i64,
    pub scope_concurrent: i64,
    pub global_concurrent: i64,
}

/// The scope block of a create, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedAdmission {
    pub source_id: String,
    /// Hash of source, revision, request, model configuration and owner.
    pub cache_key: String,
    /// Skip the cache; the logical step is then the task itself.
    pub recompute: bool,
    pub budget: AdmissionBudget,
}

/// Why admission refused a create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionRefusal {
    #[error("the scope's token bucket is empty")]
    RateLimited { retry_after: Duration },
    #[error("too many active scoped tasks")]
    Capacity,
    #[error("the source used up its steps for 24 hours")]
    SourceBudget,
    #[error("the scope used up its sources for 24 hours")]
    DailyBudget,
}

impl AdmissionRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            AdmissionRefusal::RateLimited { .. } => "WORKFLOW_AI_RATE_LIMIT",
            AdmissionRefusal::Capacity => "WORKFLOW_AI_CAPACITY",
            AdmissionRefusal::SourceBudget => "WORKFLOW_AI_SOURCE_BUDGET",
            AdmissionRefusal::DailyBudget => "WORKFLOW_AI_DAILY_BUDGET",
        }
    }
}

/// How admissions are serialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Serialization {
    /// Per `(app, scope)`: what the system uses.
    #[default]
    PerScope,
    /// One advisory lock for every admission, as the reference implementation does. Kept only
    /// as the baseline the admission benchmark compares against.
    Global,
}

/// A scoped create's outcome: a cache hit is a new task already `succeeded`, with the
/// completion event to publish.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedCreated {
    pub created: Created,
    pub event: Option<PendingEvent>,
}

const RUN_FOR_SHARE: &str = "SELECT scope_id, state, actor ->> 'userId' AS user_id FROM runs \
     WHERE id = $1 AND app_id = $2 FOR SHARE";

/// Per-(app, scope) serialization; a hash collision only serializes two unrelated scopes.
const LOCK_SCOPE: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(31) || $2, 7453))";
const LOCK_GLOBAL: &str = "SELECT pg_advisory_xact_lock(7453)";

const READ_STATE: &str = "SELECT \
     (SELECT id FROM tasks WHERE app_id = $1 AND effect_key = $3) AS existing_id, \
     CASE WHEN $8::bool THEN NULL ELSE (SELECT output FROM tasks WHERE app_id = $1 AND scope_id = $2 \
       AND cache_key = $5 AND status = 'succeeded' ORDER BY completed_at DESC LIMIT 1) END AS cached_output, \
     history.source_steps, history.sources, history.seen_source, \
     (SELECT count(*) FROM tasks WHERE app_id = $1 AND scope_id = $2 AND status IN ('queued', 'running') \
       AND cache_key IS NOT NULL) AS scope_active, \
     COALESCE((SELECT LEAST($6::float8, tokens + extract(epoch FROM now() - refilled_at) * $7::float8 / 60.0) \
       FROM scope_budgets WHERE app_id = $1 AND scope_id = $2), $6::float8) AS available \
     FROM (SELECT count(DISTINCT logical_key) FILTER (WHERE source_id = $4) AS source_steps, \
       count(DISTINCT source_id) AS sources, COALESCE(bool_or(source_id = $4), false) AS seen_source \
       FROM scope_admissions WHERE app_id = $1 AND scope_id = $2 \
       AND created_at > now() - interval '24 hours') history";

const ADMIT: &str = concat!(
    "WITH counted AS (INSERT INTO app_concurrency (app_id, active) VALUES ($1, 1) \
     ON CONFLICT (app_id) DO UPDATE SET active = app_concurrency.active + 1 \
     WHERE app_concurrency.active < $19 RETURNING active), \
     admitted AS (SELECT 1 FROM counted WHERE $20::bool), \
     bucket AS (INSERT INTO scope_budgets (app_id, scope_id, tokens, refilled_at) \
     SELECT $1, $2, $21, now() FROM admitted \
     ON CONFLICT (app_id, scope_id) DO UPDATE SET tokens = EXCLUDED.tokens, refilled_at = now()), \
     inserted AS (INSERT INTO tasks (id, app_id, run_id, scope_id, usage_subject, usage_user_id, source_id, \
     cache_key, step_key, effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, max_attempts) \
     SELECT $3, $1, $4, $2, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 FROM admitted \
     ON CONFLICT (app_id, effect_key) DO NOTHING RETURNING ",
    task_columns!(),
    "), history AS (INSERT INTO scope_admissions (task_id, app_id, scope_id, source_id, logical_key) \
     SELECT id, $1, $2, $7, $18 FROM inserted) \
     SELECT EXISTS (SELECT 1 FROM counted) AS within_cap, inserted.* FROM (SELECT 1) one LEFT JOIN inserted ON true"
);

const INSERT_CACHED: &str = concat!(
    "WITH inserted AS (INSERT INTO tasks (id, app_id, run_id, scope_id, usage_subject, usage_user_id, source_id, \
     cache_key, step_key, effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, max_attempts, \
     status, output, completed_at) \
     VALUES ($3, $1, $4, $2, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 'succeeded', $18, now()) \
     ON CONFLICT (app_id, effect_key) DO NOTHING RETURNING ",
    task_columns!(),
    "), events AS (INSERT INTO task_events (task_id, app_id, payload) SELECT id, app_id, ",
    event_payload!(),
    " FROM inserted RETURNING id, task_id, payload) \
     SELECT inserted.*, events.id AS event_id, events.payload AS event_payload \
     FROM inserted JOIN events ON events.task_id = inserted.id"
);

/// Create a scoped task: an existing effect key returns the existing task (spending nothing);
/// a cache hit creates it already `succeeded` (spending nothing); otherwise admission runs in
/// the design's order and a refusal stores nothing.
pub async fn create_scoped(
    client: &mut Client,
    task: &NewTask,
    admission: &ScopedAdmission,
) -> StoreResult<ScopedCreated> {
    create_scoped_with(client, task, admission, Serialization::PerScope).await
}

/// [`create_scoped`] with a choice of serialization (the benchmark's baseline uses `Global`).
pub async fn create_scoped_with(
    client: &mut Client,
    task: &NewTask,
    admission: &ScopedAdmission,
    serialization: Serialization,
) -> StoreResult<ScopedCreated> {
    let transaction = client.transaction().await?;
    let (run_id, scope_id, usage_subject, usage_user_id) = match &task.owner {
        TaskOwner::Run(run_id) => {
            let statement = transaction.prepare_cached(RUN_FOR_SHARE).await?;
            let row = transaction
                .query_opt(&statement, &[run_id, &task.app_id])
                .await?
                .ok_or(StoreError::RunNotFound)?;
            if row.try_get::<_, &str>("state")? != "running" {
                return Err(StoreError::RunUnavailable);
            }
            (
                Some(*run_id),
                row.try_get::<_, String>("scope_id")?,
                None,
                row.try_get::<_, Option<String>>("user_id")?,
            )
        }
        TaskOwner::Application { scope_id, usage_subject } => {
            (None, scope_id.clone(), usage_subject.clone(), None)
        }
    };
    match serialization {
        Serialization::PerScope => {
            let lock = transaction.prepare_cached(LOCK_SCOPE).await?;
            transaction.execute(&lock, &[&task.app_id, &scope_id]).await?;
        }
        Serialization::Global => {
            let lock = transaction.prepare_cached(LOCK_GLOBAL).await?;
            transaction.execute(&lock, &[]).await?;
        }
    }

    let budget = admission.budget;
    let read = transaction.prepare_cached(READ_STATE).await?;
    let state = transaction
        .query_one(
            &read,
            &[
                &task.app_id,
                &scope_id,
                &task.effect_key,
                &admission.source_id,
                &admission.cache_key,
                &(budget.burst as f64),
                &(budget.tasks_per_minute as f64),
                &admission.recompute,
            ],
        )
        .await?;

    if state.try_get::<_, Option<Uuid>>("existing_id")?.is_some() {
        transaction.rollback().await?;
        return existing(client, task).await;
    }

    let id = Uuid::new_v4();
    let logical_key = if admission.recompute { id.to_string() } else { admission.cache_key.clone() };
    let cached_output: Option<Value> = state.try_get("cached_output")?;
    let base: [&(dyn tokio_postgres::types::ToSql + Sync); 17] = [
        &task.app_id,
        &scope_id,
        &id,
        &run_id,
        &usage_subject,
        &usage_user_id,
        &admission.source_id,
        &admission.cache_key,
        &task.step_key,
        &task.effect_key,
        &task.kind,
        &task.request,
        &task.input_hash,
        &task.model_id,
        &task.model_ref,
        &task.model_config_hash,
        &task.max_attempts,
    ];

    if let Some(output) = cached_output {
        let statement = transaction.prepare_cached(INSERT_CACHED).await?;
        let mut params = base.to_vec();
        params.push(&output);
        let Some(row) = transaction.query_opt(&statement, &params).await? else {
            transaction.rollback().await?;
            return existing(client, task).await;
        };
        let settled = settled_from_row(&row)?;
        transaction.commit().await?;
        return Ok(ScopedCreated { created: Created::New(settled.task), event: Some(settled.event) });
    }

    let source_steps: i64 = state.try_get("source_steps")?;
    let sources: i64 = state.try_get("sources")?;
    let seen_source: bool = state.try_get("seen_source")?;
    let scope_active: i64 = state.try_get("scope_active")?;
    let available: f64 = state.try_get("available")?;
    let refusal = if source_steps >= budget.max_steps_per_source {
        Some(AdmissionRefusal::SourceBudget)
    } else if !seen_source && sources >= budget.sources_per_24_hours {
        Some(AdmissionRefusal::DailyBudget)
    } else if scope_active >= budget.scope_concurrent {
        Some(AdmissionRefusal::Capacity)
    } else {
        None
    };
    if let Some(refusal) = refusal {
        transaction.rollback().await?;
        return Err(StoreError::Admission(refusal));
    }

    let rate_ok = available >= 1.0;
    let global_cap = i32::try_from(budget.global_concurrent).unwrap_or(i32::MAX);
    let tokens_after = (available - 1.0).max(0.0);
    let statement = transaction.prepare_cached(ADMIT).await?;
    let mut params = base.to_vec();
    params.extend_from_slice(&[&logical_key, &global_cap, &rate_ok, &tokens_after]);
    let row = transaction.query_one(&statement, &params).await?;
    if !row.try_get::<_, bool>("within_cap")? {
        transaction.rollback().await?;
        return Err(StoreError::Admission(AdmissionRefusal::Capacity));
    }
    if !rate_ok {
        transaction.rollback().await?;
        let wait = (1.0 - available) * 60.0 / budget.tasks_per_minute as f64;
        let retry_after = Duration::from_secs(wait.ceil().max(1.0) as u64);
        return Err(StoreError::Admission(AdmissionRefusal::RateLimited { retry_after }));
    }
    if row.try_get::<_, Option<Uuid>>("id")?.is_none() {
        // The effect key was taken by a create in another scope since the read.
        transaction.rollback().await?;
        return existing(client, task).await;
    }
    let created = Task::from_row(&row)?;
    transaction.commit().await?;
    Ok(ScopedCreated { created: Created::New(created), event: None })
}

async fn existing(client: &Client, task: &NewTask) -> StoreResult<ScopedCreated> {
    let found = get_task_by_effect_key(client, &task.app_id, &task.effect_key)
        .await?
        .ok_or_else(|| StoreError::Corrupt("effect key conflict without a visible task".into()))?;
    Ok(ScopedCreated { created: Created::Existing(found), event: None })
}
