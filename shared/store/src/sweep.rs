//! The sweeper's statements (`sql/sweep/`). Each works on a bounded page chosen with `FOR UPDATE SKIP LOCKED`,
//! so any number of concurrent sweepers (and workers) share the work without waiting on each
//! other, and each sweep costs what it finds, not what the table holds.

use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use aitasks_contracts::ErrorCode;

use crate::error::StoreResult;
use crate::model::{Ended, Lease, Task};
use crate::params::{limit, millis, truncate_message, CANCELED_CODE, CANCELED_MESSAGE, QUEUE_TIMEOUT_CODE};
use crate::pool::GenericClient;
use crate::queries::{
    EXPIRE_QUEUED, EXPIRE_RUNNING, MARK_UNSENT, OWED_BEYOND, PRUNE_ADMISSIONS, TAKE_LOST, TAKE_STALE_RUNNING,
    TAKE_UNSENT,
};
use crate::rows::split_ended;

/// Queued tasks that waited longer than `queue_timeout` end `failed` with
/// `WORKFLOW_AI_QUEUE_TIMEOUT` (or `canceled` where a cancel was requested).
pub async fn expire_queued(
    client: &impl GenericClient,
    queue_timeout: Duration,
    page: usize,
) -> StoreResult<Vec<Ended>> {
    let statement = client.prepare_cached(EXPIRE_QUEUED.text()).await?;
    let (queue_timeout_ms, page) = (millis(queue_timeout), limit(page));
    let params = EXPIRE_QUEUED.bind(&[
        ("queue_timeout_ms", &queue_timeout_ms),
        ("page", &page),
        ("canceled_code", &CANCELED_CODE),
        ("queue_timeout_code", &QUEUE_TIMEOUT_CODE),
    ])?;
    let rows = client.query(&statement, &params).await?;
    Ok(split_ended(&rows)?.0)
}

/// A running attempt whose holder is gone ([`take_stale_running`]): an on-demand attempt whose
/// worker stopped sending heartbeats, or one in a provider batch whose lease has passed.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleAttempt {
    pub lease: Lease,
    pub app_id: String,
    pub max_attempts: i32,
    pub cancel_requested: bool,
}

/// What the sweeper decided a stale attempt's ending writes (the worker's rule decides it:
/// `aitasks_runtime`'s settle::decision).
#[derive(Debug, Clone, PartialEq)]
pub enum StaleEnding {
    /// Back in the queue for a counted retry; the sweeper sends its message after the backoff.
    Requeue { code: ErrorCode, message: String },
    /// Ended `failed`.
    Fail { code: ErrorCode, message: String },
    /// Ended `canceled` (a cancel was requested).
    Canceled,
}

/// What [`expire_running`] wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExpiredRunning {
    /// Back in the queue with attempts left, marked sent: the caller sends their message.
    pub requeued: Vec<Task>,
    /// Ended `failed` (budget spent) or `canceled`.
    pub settled: Vec<Ended>,
}

/// Up to `page` running tasks whose holder is gone, oldest first: an on-demand attempt whose
/// heartbeat is older than `stale_after`, or a provider batch's whose lease has passed. A plain
/// read: [`expire_running`] checks it all again as it writes.
pub async fn take_stale_running(
    client: &impl GenericClient,
    stale_after: Duration,
    page: usize,
) -> StoreResult<Vec<StaleAttempt>> {
    let statement = client.prepare_cached(TAKE_STALE_RUNNING.text()).await?;
    let (stale_after_ms, page) = (millis(stale_after), limit(page));
    let params = TAKE_STALE_RUNNING.bind(&[("stale_after_ms", &stale_after_ms), ("page", &page)])?;
    let rows = client.query(&statement, &params).await?;
    rows.iter()
        .map(|row| {
            Ok(StaleAttempt {
                lease: Lease {
                    task_id: row.try_get("id")?,
                    attempt: row.try_get("attempts")?,
                    scoped: row.try_get("scoped")?,
                    batch_id: row.try_get("batch_id")?,
                },
                app_id: row.try_get("app_id")?,
                max_attempts: row.try_get("max_attempts")?,
                cancel_requested: row.try_get("cancel_requested")?,
            })
        })
        .collect()
}

/// Write what was decided for stale attempts ([`take_stale_running`]), in one statement. An
/// attempt is written only while it is still running, still stale, in the same batch, and its
/// cancel requested exactly when the ending is [`StaleEnding::Canceled`]: one that a worker or
/// another sweeper wrote meanwhile is left alone.
pub async fn expire_running(
    client: &impl GenericClient,
    stale_after: Duration,
    decided: &[(Lease, StaleEnding)],
) -> StoreResult<ExpiredRunning> {
    if decided.is_empty() {
        return Ok(ExpiredRunning::default());
    }
    let task_ids: Vec<Uuid> = decided.iter().map(|(lease, _)| lease.task_id).collect();
    let attempts: Vec<i32> = decided.iter().map(|(lease, _)| lease.attempt).collect();
    let batch_ids: Vec<Option<Uuid>> = decided.iter().map(|(lease, _)| lease.batch_id).collect();
    let (mut statuses, mut codes, mut messages) = (Vec::new(), Vec::new(), Vec::new());
    for (_, ending) in decided {
        let (status, code, message) = match ending {
            StaleEnding::Requeue { code, message } => ("queued", code.as_str(), truncate_message(message)),
            StaleEnding::Fail { code, message } => ("failed", code.as_str(), truncate_message(message)),
            StaleEnding::Canceled => ("canceled", CANCELED_CODE, CANCELED_MESSAGE.to_owned()),
        };
        statuses.push(status);
        codes.push(code);
        messages.push(message);
    }
    let statement = client.prepare_cached(EXPIRE_RUNNING.text()).await?;
    let stale_after_ms = millis(stale_after);
    let params = EXPIRE_RUNNING.bind(&[
        ("task_ids", &task_ids),
        ("attempts", &attempts),
        ("batch_ids", &batch_ids),
        ("statuses", &statuses),
        ("error_codes", &codes),
        ("error_messages", &messages),
        ("stale_after_ms", &stale_after_ms),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let (settled, requeued) = split_ended(&rows)?;
    Ok(ExpiredRunning { requeued, settled })
}

/// Queued tasks whose message is owed: never sent (a new task only once it is older than
/// `grace`, so a create whose send is in flight is left alone; a requeued one at once), or
/// sent longer than `resend_after` ago (lost). They are
/// marked sent in the same statement, so concurrent sweepers split the page; if sending
/// fails, give them back with [`mark_unsent`]. Consumers tolerate the odd duplicate.
pub async fn take_unsent(
    client: &impl GenericClient,
    grace: Duration,
    resend_after: Duration,
    page: usize,
) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(TAKE_UNSENT.text()).await?;
    let (grace_ms, resend_after_ms, page) = (millis(grace), millis(resend_after), limit(page));
    let params = TAKE_UNSENT.bind(&[
        ("grace_ms", &grace_ms),
        ("resend_after_ms", &resend_after_ms),
        ("page", &page),
    ])?;
    let rows = client.query(&statement, &params).await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// A task message to send: the task and its application (the message's group, so that SQS fair
/// queues keep one application's backlog from delaying the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwedMessage {
    pub task_id: Uuid,
    pub app_id: String,
}

impl OwedMessage {
    pub(crate) fn from_row(row: &tokio_postgres::Row) -> StoreResult<OwedMessage> {
        Ok(OwedMessage { task_id: row.try_get("id")?, app_id: row.try_get("app_id")? })
    }
}

/// Whether the store owes more task messages (sent more than `older_than` ago, not yet claimed)
/// than the queue says it holds (`in_queue`), and the cutoff to re-send them by. Costs at most
/// `in_queue + 1` index entries.
pub async fn owed_beyond(
    client: &impl GenericClient,
    in_queue: u64,
    older_than: Duration,
) -> StoreResult<Option<DateTime<Utc>>> {
    let statement = client.prepare_cached(OWED_BEYOND.text()).await?;
    let in_queue = i64::try_from(in_queue).unwrap_or(i64::MAX - 1);
    let older_than_ms = millis(older_than);
    let params = OWED_BEYOND.bind(&[("in_queue", &in_queue), ("older_than_ms", &older_than_ms)])?;
    let row = client.query_one(&statement, &params).await?;
    Ok(if row.try_get("lost")? { row.try_get("cutoff")? } else { None })
}

/// Up to `page` queued tasks whose message was sent before `cutoff`, marked sent now: their
/// messages are to be sent again.
pub async fn take_lost(
    client: &impl GenericClient,
    cutoff: DateTime<Utc>,
    page: usize,
) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(TAKE_LOST.text()).await?;
    let page = limit(page);
    let params = TAKE_LOST.bind(&[("cutoff", &cutoff), ("page", &page)])?;
    let rows = client.query(&statement, &params).await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// Record that these tasks' messages are owed again (a send failed).
pub async fn mark_unsent(client: &impl GenericClient, task_ids: &[Uuid]) -> StoreResult<u64> {
    let statement = client.prepare_cached(MARK_UNSENT.text()).await?;
    Ok(client.execute(&statement, &MARK_UNSENT.bind(&[("task_ids", &task_ids)])?).await?)
}

/// Delete admission history older than `older_than` (24 h: the budgets' horizon).
pub async fn prune_admissions(
    client: &impl GenericClient,
    older_than: Duration,
    page: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_ADMISSIONS.text()).await?;
    let (older_than_ms, page) = (millis(older_than), limit(page));
    let params = PRUNE_ADMISSIONS.bind(&[("older_than_ms", &older_than_ms), ("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}
