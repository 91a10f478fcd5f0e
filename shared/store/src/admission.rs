//! Scoped inference: the result cache and admission (docs/scoped-inference.md), in the create transaction.
//!
//! Admission is serialized per `(app, scope)` with a transaction-scoped advisory lock, never
//! globally. Inside it, one statement reads everything the decision needs (existing effect
//! key, cache hit, the 24 h budgets, the scope's active count, the token bucket) and one
//! statement writes (the application-wide counter, the bucket, the task, its admission row).
//! A refusal rolls everything back: nothing is stored.
//!
//! The application-wide cap counts active scoped tasks in 32 counter shards per application
//! (the shard of the task's scope), raised by admission and lowered in the same statement as
//! every transition that ends a scoped task. It holds exactly without serializing every
//! admission of an application:
//!
//! - Far from the cap, admissions take the application's advisory lock *shared*. Each raises
//!   its shard, then sums all shards in the same statement and admits only if that sum plus
//!   `max_connections - 1` stays within the cap. Of any set of admissions, consider the one
//!   that checked last: every other was then either committed (so in its sum) or still open
//!   on one of at most `max_connections - 1` other sessions, so the total never passes the cap.
//! - Near the cap (or when that check fails), admission takes the lock *exclusive*: no other
//!   admission of the application is then open, so the sum is exact and the cap is met exactly.
//!
//! Settlements lower the counters without the lock; an uncommitted decrement is invisible,
//! which only errs on the side of refusing.

use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use crate::model::{
    inserted_columns, new_id, settled_from_row, task_columns, Created, NewTask, PendingEvent, Task, TaskOwner,
};
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
const LOCK_APP_SHARED: &str = "SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 7454))";
const LOCK_APP_EXCLUSIVE: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1, 7454))";

/// The bucket's refill clamps elapsed time at zero: `now()` is this transaction's start, which
/// can be earlier than a refill committed by another admission while this one waited.
const READ_STATE: &str = "SELECT \
     (SELECT id FROM tasks WHERE app_id = $1 AND effect_key = $3) AS existing_id, \
     CASE WHEN $8::bool THEN NULL ELSE (SELECT output FROM tasks WHERE app_id = $1 AND scope_id = $2 \
       AND cache_key = $5 AND status = 'succeeded' ORDER BY completed_at DESC LIMIT 1) END AS cached_output, \
     history.source_steps, history.sources, history.seen_source, \
     (SELECT count(*) FROM tasks WHERE app_id = $1 AND scope_id = $2 AND status IN ('queued', 'running') \
       AND cache_key IS NOT NULL) AS scope_active, \
     COALESCE((SELECT LEAST($6::float8, tokens + GREATEST(extract(epoch FROM now() - refilled_at), 0) * $7::float8 / 60.0) \
       FROM scope_budgets WHERE app_id = $1 AND scope_id = $2), $6::float8) AS available, \
     (SELECT COALESCE(sum(active), 0)::bigint FROM app_concurrency WHERE app_id = $1) AS app_active, \
     current_setting('max_connections')::bigint AS max_connections \
     FROM (SELECT count(DISTINCT logical_key) FILTER (WHERE source_id = $4) AS source_steps, \
       count(DISTINCT source_id) AS sources, COALESCE(bool_or(source_id = $4), false) AS seen_source \
       FROM scope_admissions WHERE app_id = $1 AND scope_id = $2 \
       AND created_at > now() - interval '24 hours') history";

const ADMIT: &str = concat!(
    "WITH counted AS (INSERT INTO app_concurrency (app_id, shard, active) VALUES ($1, scope_shard($2), 1) \
     ON CONFLICT (app_id, shard) DO UPDATE SET active = app_concurrency.active + 1 RETURNING active), \
     within AS (SELECT counted.active + $22::bigint + COALESCE((SELECT sum(active) FROM app_concurrency \
     WHERE app_id = $1 AND shard <> scope_shard($2)), 0) <= $19::bigint AS ok FROM counted), \
     admitted AS (SELECT 1 FROM within WHERE ok AND $20::bool), \
     bucket AS (INSERT INTO scope_budgets (app_id, scope_id, tokens, refilled_at) \
     SELECT $1, $2, $21, now() FROM admitted \
     ON CONFLICT (app_id, scope_id) DO UPDATE SET tokens = EXCLUDED.tokens, refilled_at = now()), \
     inserted AS (INSERT INTO tasks (id, app_id, run_id, scope_id, usage_subject, usage_user_id, source_id, \
     cache_key, step_key, effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, max_attempts) \
     SELECT $3, $1, $4, $2, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 FROM admitted \
     ON CONFLICT (app_id, effect_key) DO NOTHING RETURNING ",
    inserted_columns!(),
    "), history AS (INSERT INTO scope_admissions (task_id, app_id, scope_id, source_id, logical_key) \
     SELECT id, $1, $2, $7, $18 FROM inserted) \
     SELECT (SELECT ok FROM within) AS within_cap, inserted.* FROM (SELECT 1) one LEFT JOIN inserted ON true"
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
    if let Some(created) = attempt(client, task, admission, serialization, None).await? {
        return Ok(created);
    }
    // Far from the cap by the first read, but not by the check under the shared lock: once
    // more, alone (an exclusive attempt always decides).
    attempt(client, task, admission, serialization, Some(AppLock::Exclusive))
        .await?
        .ok_or(StoreError::Admission(AdmissionRefusal::Capacity))
}

/// How an admission holds its application's lock (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AppLock {
    Shared,
    Exclusive,
}

/// One admission transaction. `app_lock` forces the application lock's mode; `None` picks it
/// from what the first read sees. `None` back means "over the cap under the shared lock: try
/// again exclusive".
async fn attempt(
    client: &mut Client,
    task: &NewTask,
    admission: &ScopedAdmission,
    serialization: Serialization,
    app_lock: Option<AppLock>,
) -> StoreResult<Option<ScopedCreated>> {
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

    let budget = admission.budget;
    let (lock, read) = match serialization {
        Serialization::PerScope => {
            tokio::try_join!(transaction.prepare_cached(LOCK_SCOPE), transaction.prepare_cached(READ_STATE))?
        }
        Serialization::Global => {
            tokio::try_join!(transaction.prepare_cached(LOCK_GLOBAL), transaction.prepare_cached(READ_STATE))?
        }
    };
    let lock_params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = match serialization {
        Serialization::PerScope => vec![&task.app_id, &scope_id],
        Serialization::Global => vec![],
    };
    let (burst, per_minute) = (budget.burst as f64, budget.tasks_per_minute as f64);
    let read_params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
        &task.app_id,
        &scope_id,
        &task.effect_key,
        &admission.source_id,
        &admission.cache_key,
        &burst,
        &per_minute,
        &admission.recompute,
    ];
    // Pipelined: the server runs the lock first, and the read's snapshot is taken after it.
    let (_, state) = tokio::try_join!(
        transaction.execute(&lock, &lock_params),
        transaction.query_one(&read, &read_params)
    )?;

    if state.try_get::<_, Option<Uuid>>("existing_id")?.is_some() {
        transaction.rollback().await?;
        return existing(client, task).await.map(Some);
    }

    let id = new_id();
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
            return existing(client, task).await.map(Some);
        };
        let settled = settled_from_row(&row)?;
        transaction.commit().await?;
        return Ok(Some(ScopedCreated { created: Created::New(settled.task), event: Some(settled.event) }));
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

    // Other sessions that may hold an uncounted admission when the lock is shared.
    let other_sessions: i64 = state.try_get::<_, i64>("max_connections")?.saturating_sub(1).max(0);
    let app_active: i64 = state.try_get("app_active")?;
    let app_lock = app_lock.unwrap_or(
        if app_active.saturating_add(other_sessions).saturating_add(1) <= budget.global_concurrent {
            AppLock::Shared
        } else {
            AppLock::Exclusive
        },
    );
    let slack: i64 = if app_lock == AppLock::Shared { other_sessions } else { 0 };
    let rate_ok = available >= 1.0;
    let tokens_after = (available - 1.0).max(0.0);
    let (lock_app, admit) = tokio::try_join!(
        transaction.prepare_cached(match app_lock {
            AppLock::Shared => LOCK_APP_SHARED,
            AppLock::Exclusive => LOCK_APP_EXCLUSIVE,
        }),
        transaction.prepare_cached(ADMIT)
    )?;
    let mut params = base.to_vec();
    params.extend_from_slice(&[&logical_key, &budget.global_concurrent, &rate_ok, &tokens_after, &slack]);
    // Pipelined like the read: the admit statement's snapshot is taken once the lock is held.
    let (_, row) =
        tokio::try_join!(transaction.execute(&lock_app, &base[..1]), transaction.query_one(&admit, &params))?;
    if !row.try_get::<_, bool>("within_cap")? {
        transaction.rollback().await?;
        return match app_lock {
            AppLock::Shared => Ok(None),
            AppLock::Exclusive => Err(StoreError::Admission(AdmissionRefusal::Capacity)),
        };
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
        return existing(client, task).await.map(Some);
    }
    let created = Task::inserted(task, &row)?;
    transaction.commit().await?;
    Ok(Some(ScopedCreated { created: Created::New(created), event: None }))
}

async fn existing(client: &Client, task: &NewTask) -> StoreResult<ScopedCreated> {
    let found = get_task_by_effect_key(client, &task.app_id, &task.effect_key)
        .await?
        .ok_or_else(|| StoreError::Corrupt("effect key conflict without a visible task".into()))?;
    Ok(ScopedCreated { created: Created::Existing(found), event: None })
}
