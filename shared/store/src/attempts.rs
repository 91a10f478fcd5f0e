//! A task's attempts (`sql/attempts/task_attempts.sql`): each counted attempt as the
//! trigger on `tasks` recorded it when it ended (`task_status_changed`, migrations/V38), and the one
//! running now.

use aitasks_contracts::{AttemptOutcome, AttemptUsage, TaskAttempt};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::pool::GenericClient;
use crate::queries::TASK_ATTEMPTS;

/// Up to `limit` of a task's ended attempts, oldest first, then the attempt running now (when the
/// task is running: not counted in `limit`); `None` when the task is not this application's. One
/// round trip.
pub async fn task_attempts(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
    limit: usize,
) -> StoreResult<Option<AttemptsOfTask>> {
    let statement = client.prepare_cached(TASK_ATTEMPTS.text()).await?;
    let limit = limit as i64;
    let params = TASK_ATTEMPTS.bind(&[("task_id", &task_id), ("app_id", &app_id), ("limit", &limit)])?;
    let rows = client.query(&statement, &params).await?;
    let Some(first) = rows.first() else { return Ok(None) };
    let mut ended = Vec::with_capacity(rows.len());
    for row in &rows {
        if row.try_get::<_, Option<i64>>("n")?.is_some() {
            ended.push(ended_attempt(row)?);
        }
    }
    let status: String = first.try_get("status")?;
    let running = if status == "running" {
        let attempt: i32 = first.try_get("current_attempt")?;
        Some(TaskAttempt {
            attempt: attempt.max(0) as u32,
            started_at: first.try_get("current_started_at")?,
            ended_at: None,
            outcome: AttemptOutcome::Running,
            profile: None,
            model_id: None,
            error_code: None,
            error_message: None,
            usage: None,
            estimated_cost_usd: None,
        })
    } else {
        None
    };
    Ok(Some(AttemptsOfTask { ended, running }))
}

/// A task's attempts: the ended ones (oldest first) and the one running now.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptsOfTask {
    pub ended: Vec<TaskAttempt>,
    pub running: Option<TaskAttempt>,
}

fn ended_attempt(row: &Row) -> StoreResult<TaskAttempt> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("a recorded attempt without its {what}"));
    let attempt: i32 = row.try_get::<_, Option<i32>>("attempt")?.ok_or_else(|| corrupt("number"))?;
    let outcome: String = row.try_get::<_, Option<String>>("outcome")?.ok_or_else(|| corrupt("outcome"))?;
    let outcome = AttemptOutcome::parse(&outcome).ok_or_else(|| corrupt("known outcome"))?;
    let started_at: DateTime<Utc> =
        row.try_get::<_, Option<DateTime<Utc>>>("started_at")?.ok_or_else(|| corrupt("start"))?;
    let tokens = |name: &str| -> StoreResult<Option<u64>> {
        Ok(row.try_get::<_, Option<i64>>(name)?.map(|n| n.max(0) as u64))
    };
    let usage = match (tokens("input_tokens")?, tokens("output_tokens")?) {
        (Some(input_tokens), Some(output_tokens)) => Some(AttemptUsage { input_tokens, output_tokens }),
        _ => None,
    };
    Ok(TaskAttempt {
        attempt: attempt.max(0) as u32,
        started_at,
        ended_at: row.try_get("ended_at")?,
        outcome,
        profile: row.try_get("profile")?,
        model_id: row.try_get("model_id")?,
        error_code: row.try_get("error_code")?,
        error_message: row.try_get("error_message")?,
        usage,
        estimated_cost_usd: row.try_get("estimated_cost_usd")?,
    })
}
