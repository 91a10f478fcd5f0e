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
//!
//! The optional system-wide cap (configuration, not the caller's budget) counts every
//! application's active scoped tasks in `system_concurrency`, which a trigger keeps in step with
//! the application counters (migrations/V11). It holds exactly by the same argument, with its
//! own advisory lock taken after the application's: shared far from the cap (shared holders
//! never wait on each other, so no admission waits on another application's), exclusive near
//! it. Locks are always taken scope, application, system: no cycle, no deadlock.

use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::{
    new_id, AdmissionRefusal, Created, NewTask, RunState, ScopedAdmission, ScopedCreated, Task, TaskOwner,
};
use crate::pool::Client;
use crate::queries::{
    ADMIT, INSERT_CACHED, LOCK_APP_EXCLUSIVE, LOCK_APP_SHARED, LOCK_SCOPE, LOCK_SYSTEM_EXCLUSIVE,
    LOCK_SYSTEM_SHARED, READ_STATE, RUN_FOR_SHARE,
};
use crate::read::get_task_by_effect_key;
use crate::rows::ended_from_row;
use crate::statement::Param;

/// Create a scoped task: an existing effect key returns the existing task (spending nothing);
/// a cache hit creates it already `succeeded` (spending nothing); otherwise admission runs in
/// the design's order and a refusal stores nothing.
pub async fn create_scoped(
    client: &mut Client,
    task: &NewTask,
    admission: &ScopedAdmission,
) -> StoreResult<ScopedCreated> {
    let mut forced = Forced::default();
    // Far from a cap by the first read, but not by the check under its shared lock: once more,
    // holding that cap's lock alone (an exclusive attempt always decides). Two caps, so at most
    // two retries.
    for _ in 0..3 {
        match attempt(client, task, admission, forced).await? {
            Attempted::Decided(created) => return Ok(created),
            Attempted::Retry { app, system } => {
                if app {
                    forced.app = Some(LockMode::Exclusive);
                }
                if system {
                    forced.system = Some(LockMode::Exclusive);
                }
            }
        }
    }
    Err(StoreError::Admission(AdmissionRefusal::Capacity))
}

/// How an admission holds a cap's lock (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LockMode {
    Shared,
    Exclusive,
}

/// Lock modes a retry insists on; `None` picks the mode from what the first read sees.
#[derive(Debug, Clone, Copy, Default)]
struct Forced {
    app: Option<LockMode>,
    system: Option<LockMode>,
}

#[expect(
    clippy::large_enum_variant,
    reason = "a return value moved once per admission; a box would only add an allocation"
)]
enum Attempted {
    Decided(ScopedCreated),
    /// Over a cap checked under its shared lock: try again with that lock exclusive.
    Retry {
        app: bool,
        system: bool,
    },
}

/// The lock mode for a cap: shared while even every other session's uncounted admission could
/// not reach it.
fn mode_for(active: i64, other_sessions: i64, cap: i64) -> LockMode {
    if active.saturating_add(other_sessions).saturating_add(1) <= cap {
        LockMode::Shared
    } else {
        LockMode::Exclusive
    }
}

/// One admission transaction.
async fn attempt(
    client: &mut Client,
    task: &NewTask,
    admission: &ScopedAdmission,
    forced: Forced,
) -> StoreResult<Attempted> {
    let transaction = client.transaction().await?;
    let (run_id, scope_id, usage_subject, usage_user_id) = match &task.owner {
        TaskOwner::Run(run_id) => {
            let statement = transaction.prepare_cached(RUN_FOR_SHARE.text()).await?;
            let params = RUN_FOR_SHARE.bind(&[("run_id", run_id), ("app_id", &task.app_id)])?;
            let row = transaction.query_opt(&statement, &params).await?.ok_or(StoreError::RunNotFound)?;
            if RunState::parse(row.try_get("state")?) != Some(RunState::Running) {
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
    let (lock_statement, read) = tokio::try_join!(
        transaction.prepare_cached(LOCK_SCOPE.text()),
        transaction.prepare_cached(READ_STATE.text())
    )?;
    let lock_params = LOCK_SCOPE.bind(&[("app_id", &task.app_id), ("scope_id", &scope_id)])?;
    let (burst, per_minute) = (budget.burst as f64, budget.tasks_per_minute as f64);
    let read_params = READ_STATE.bind(&[
        ("app_id", &task.app_id),
        ("scope_id", &scope_id),
        ("effect_key", &task.effect_key),
        ("source_id", &admission.source_id),
        ("cache_key", &admission.cache_key),
        ("burst", &burst),
        ("tasks_per_minute", &per_minute),
        ("recompute", &admission.recompute),
    ])?;
    // Pipelined: the server runs the lock first, and the read's snapshot is taken after it.
    let (_, state) = tokio::try_join!(
        transaction.execute(&lock_statement, &lock_params),
        transaction.query_one(&read, &read_params)
    )?;

    if state.try_get::<_, Option<Uuid>>("existing_id")?.is_some() {
        transaction.rollback().await?;
        return existing(client, task).await.map(Attempted::Decided);
    }

    let id = new_id();
    let logical_key = if admission.recompute { id.to_string() } else { admission.cache_key.clone() };
    let cached_output: Option<Value> = state.try_get("cached_output")?;
    // The new task's columns, as both INSERT_CACHED and ADMIT name them.
    let mut task_values: Vec<Param> = vec![
        ("app_id", &task.app_id),
        ("scope_id", &scope_id),
        ("id", &id),
        ("run_id", &run_id),
        ("usage_subject", &usage_subject),
        ("usage_user_id", &usage_user_id),
        ("source_id", &admission.source_id),
        ("cache_key", &admission.cache_key),
    ];
    task_values.extend(task.request_values());

    if let Some(output) = cached_output {
        let statement = transaction.prepare_cached(INSERT_CACHED.text()).await?;
        let mut values = task_values.clone();
        values.push(("output", &output));
        let params = INSERT_CACHED.bind(&values)?;
        let Some(row) = transaction.query_opt(&statement, &params).await? else {
            transaction.rollback().await?;
            return existing(client, task).await.map(Attempted::Decided);
        };
        let settled = ended_from_row(&row)?;
        transaction.commit().await?;
        return Ok(Attempted::Decided(ScopedCreated {
            created: Created::New(settled.task),
            event: Some(settled.event),
        }));
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
    if let Some(limit) = admission.limits.tenant_tasks_per_day {
        if let Err(refusal) = crate::tenant_quota::spend_task(&transaction, &task.app_id, limit).await? {
            transaction.rollback().await?;
            return Err(StoreError::Admission(refusal));
        }
    }

    // Other sessions that may hold an uncounted admission when a cap's lock is shared.
    let other_sessions: i64 = state.try_get::<_, i64>("max_connections")?.saturating_sub(1).max(0);
    let app_active: i64 = state.try_get("app_active")?;
    let system_active: i64 = state.try_get("system_active")?;
    let app_lock =
        forced.app.unwrap_or_else(|| mode_for(app_active, other_sessions, budget.global_concurrent));
    let system_lock = admission
        .limits
        .system_cap
        .map(|cap| forced.system.unwrap_or_else(|| mode_for(system_active, other_sessions, cap)));
    let slack = |mode: Option<LockMode>| if mode == Some(LockMode::Shared) { other_sessions } else { 0 };
    let (app_slack, system_slack) = (slack(Some(app_lock)), slack(system_lock));
    let rate_ok = available >= 1.0;
    let tokens_after = (available - 1.0).max(0.0);
    let lock_app_sql = match app_lock {
        LockMode::Shared => &LOCK_APP_SHARED,
        LockMode::Exclusive => &LOCK_APP_EXCLUSIVE,
    };
    let lock_system_sql = match system_lock {
        Some(LockMode::Shared) => Some(&LOCK_SYSTEM_SHARED),
        Some(LockMode::Exclusive) => Some(&LOCK_SYSTEM_EXCLUSIVE),
        None => None,
    };
    let (lock_app, admit) = tokio::try_join!(
        transaction.prepare_cached(lock_app_sql.text()),
        transaction.prepare_cached(ADMIT.text())
    )?;
    let lock_system = match lock_system_sql {
        Some(sql) => Some((transaction.prepare_cached(sql.text()).await?, sql.bind(&[])?)),
        None => None,
    };
    let lock_app_params = lock_app_sql.bind(&[("app_id", &task.app_id)])?;
    let mut values = task_values.clone();
    values.extend_from_slice(&[
        ("logical_key", &logical_key),
        ("app_cap", &budget.global_concurrent),
        ("rate_ok", &rate_ok),
        ("tokens_after", &tokens_after),
        ("uncounted_sessions", &app_slack),
        ("system_cap", &admission.limits.system_cap),
        ("system_uncounted", &system_slack),
    ]);
    let admit_params = ADMIT.bind(&values)?;
    // Pipelined like the read: the admit statement's snapshot is taken once the locks are held
    // (application first, then system: the order every admission takes them in).
    let lock_system_held = async {
        if let Some((statement, params)) = &lock_system {
            transaction.execute(statement, params).await?;
        }
        Ok::<_, tokio_postgres::Error>(())
    };
    let (_, _, row) = tokio::try_join!(
        transaction.execute(&lock_app, &lock_app_params),
        lock_system_held,
        transaction.query_one(&admit, &admit_params)
    )?;
    let within_app: bool = row.try_get("within_cap")?;
    let within_system: bool = row.try_get("within_system_cap")?;
    if !within_app || !within_system {
        transaction.rollback().await?;
        let decided = (!within_app && app_lock == LockMode::Exclusive)
            || (!within_system && system_lock == Some(LockMode::Exclusive));
        if decided {
            return Err(StoreError::Admission(AdmissionRefusal::Capacity));
        }
        return Ok(Attempted::Retry { app: !within_app, system: !within_system });
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
        return existing(client, task).await.map(Attempted::Decided);
    }
    let created = Task::inserted(task, &row)?;
    transaction.commit().await?;
    Ok(Attempted::Decided(ScopedCreated { created: Created::New(created), event: None }))
}

async fn existing(client: &Client, task: &NewTask) -> StoreResult<ScopedCreated> {
    let found = get_task_by_effect_key(client, &task.app_id, &task.effect_key)
        .await?
        .ok_or_else(|| StoreError::Corrupt("effect key conflict without a visible task".into()))?;
    Ok(ScopedCreated { created: Created::Existing(found), event: None })
}
