//! The sweeper's statements. Each works on a bounded batch chosen with `FOR UPDATE SKIP LOCKED`,
//! so any number of concurrent sweepers (and workers) share the work without waiting on each
//! other, and each sweep costs what it finds, not what the table holds.

use std::time::Duration;

use uuid::Uuid;

use crate::model::Task;
use crate::pool::GenericClient;
use crate::sql::{commit_without_flush_wait, limit, millis, queued, split_settled, with_settlement};
use crate::{Settled, StoreResult};

const EXPIRE_QUEUED: &str = with_settlement!(
    "candidates AS (SELECT id AS candidate_id FROM tasks WHERE status = 'queued' \
     AND updated_at < now() - $1::bigint * interval '1 millisecond' \
     ORDER BY updated_at, id LIMIT $2 FOR UPDATE SKIP LOCKED),",
    "UPDATE tasks SET \
     status = CASE WHEN cancel_requested_at IS NOT NULL THEN 'canceled' ELSE 'failed' END, \
     error_code = CASE WHEN cancel_requested_at IS NOT NULL THEN 'WORKFLOW_AI_CANCELED' \
                  ELSE 'WORKFLOW_AI_QUEUE_TIMEOUT' END, \
     error_message = CASE WHEN cancel_requested_at IS NOT NULL THEN 'The task was canceled.' \
                     ELSE 'The task waited in the queue longer than the queue timeout.' END, \
     output = NULL, completed_at = now(), updated_at = now() \
     FROM candidates WHERE id = candidate_id"
);

const EXPIRE_RUNNING: &str = with_settlement!(
    "candidates AS (SELECT id AS candidate_id FROM tasks WHERE status = 'running' \
     AND heartbeat_at < now() - $1::bigint * interval '1 millisecond' \
     ORDER BY heartbeat_at, id LIMIT $2 FOR UPDATE SKIP LOCKED),",
    "UPDATE tasks SET \
     status = CASE WHEN cancel_requested_at IS NOT NULL THEN 'canceled' \
                   WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END, \
     error_code = CASE WHEN cancel_requested_at IS NOT NULL THEN 'WORKFLOW_AI_CANCELED' \
                  ELSE 'WORKFLOW_AI_INTERRUPTED' END, \
     error_message = CASE WHEN cancel_requested_at IS NOT NULL THEN 'The task was canceled.' \
                     ELSE 'The worker stopped sending heartbeats.' END, \
     completed_at = CASE WHEN cancel_requested_at IS NOT NULL OR attempts >= max_attempts \
                    THEN now() END, \
     heartbeat_at = CASE WHEN cancel_requested_at IS NULL AND attempts < max_attempts \
                    THEN NULL ELSE heartbeat_at END, \
     message_sent_at = CASE WHEN cancel_requested_at IS NULL AND attempts < max_attempts \
                       THEN NULL ELSE message_sent_at END, \
     output = NULL, updated_at = now() \
     FROM candidates WHERE id = candidate_id"
);

/// Mark a batch of owed messages as sent before sending them; see [`claim_unsent`].
const CLAIM_UNSENT: &str = "UPDATE tasks SET message_sent_at = now() WHERE id IN ( \
     SELECT id FROM tasks WHERE status = 'queued' AND ( \
       (message_sent_at IS NULL AND (attempts > 0 OR created_at < now() - $1::bigint * interval '1 millisecond')) \
       OR message_sent_at < now() - $2::bigint * interval '1 millisecond') \
     ORDER BY message_sent_at NULLS FIRST, id LIMIT $3 FOR UPDATE SKIP LOCKED) \
     RETURNING id";

const MARK_SENT: &str = concat!(
    "UPDATE tasks SET message_sent_at = now() WHERE id = $1 AND status = ",
    queued!(),
    " RETURNING ",
    commit_without_flush_wait!()
);

const MARK_UNSENT: &str =
    concat!("UPDATE tasks SET message_sent_at = NULL WHERE id = ANY($1) AND status = ", queued!());

const PRUNE_ADMISSIONS: &str = "DELETE FROM scope_admissions WHERE task_id IN ( \
     SELECT task_id FROM scope_admissions \
     WHERE created_at < now() - $1::bigint * interval '1 millisecond' \
     ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)";

/// Queued tasks that waited longer than `queue_timeout` end `failed` with
/// `WORKFLOW_AI_QUEUE_TIMEOUT` (or `canceled` where a cancel was requested).
pub async fn expire_queued(
    client: &impl GenericClient,
    queue_timeout: Duration,
    batch: usize,
) -> StoreResult<Vec<Settled>> {
    let statement = client.prepare_cached(EXPIRE_QUEUED).await?;
    let rows = client.query(&statement, &[&millis(queue_timeout), &limit(batch)]).await?;
    Ok(split_settled(&rows)?.0)
}

/// What [`expire_running`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExpiredRunning {
    /// Back in the queue with attempts left; their message is owed (see [`claim_unsent`]).
    pub requeued: Vec<Task>,
    /// Ended `failed`/`WORKFLOW_AI_INTERRUPTED` (budget spent) or `canceled`.
    pub settled: Vec<Settled>,
}

/// Running tasks whose heartbeat is older than `stale_after`: their worker died. Requeued while
/// attempts remain, else `failed` with `WORKFLOW_AI_INTERRUPTED`; `canceled` where a cancel was
/// requested.
pub async fn expire_running(
    client: &impl GenericClient,
    stale_after: Duration,
    batch: usize,
) -> StoreResult<ExpiredRunning> {
    let statement = client.prepare_cached(EXPIRE_RUNNING).await?;
    let rows = client.query(&statement, &[&millis(stale_after), &limit(batch)]).await?;
    let (settled, requeued) = split_settled(&rows)?;
    Ok(ExpiredRunning { requeued, settled })
}

/// Queued tasks whose message is owed: never sent (a new task only once it is older than
/// `grace`, so a create whose send is in flight is left alone; a requeued one at once), or
/// sent longer than `resend_after` ago (lost). They are
/// marked sent in the same statement, so concurrent sweepers split the batch; if sending
/// fails, give them back with [`mark_unsent`]. Consumers tolerate the odd duplicate.
pub async fn claim_unsent(
    client: &impl GenericClient,
    grace: Duration,
    resend_after: Duration,
    batch: usize,
) -> StoreResult<Vec<Uuid>> {
    let statement = client.prepare_cached(CLAIM_UNSENT).await?;
    let rows = client.query(&statement, &[&millis(grace), &millis(resend_after), &limit(batch)]).await?;
    rows.iter().map(|row| row.try_get("id").map_err(Into::into)).collect()
}

/// Record that a task's message was sent (after the create committed and the send succeeded).
pub async fn mark_sent(client: &impl GenericClient, task_id: Uuid) -> StoreResult<bool> {
    let statement = client.prepare_cached(MARK_SENT).await?;
    Ok(client.execute(&statement, &[&task_id]).await? == 1)
}

/// Record that these tasks' messages are owed again (a send failed).
pub async fn mark_unsent(client: &impl GenericClient, task_ids: &[Uuid]) -> StoreResult<u64> {
    let statement = client.prepare_cached(MARK_UNSENT).await?;
    Ok(client.execute(&statement, &[&task_ids]).await?)
}

/// Delete admission history older than `older_than` (24 h: the budgets' horizon).
pub async fn prune_admissions(
    client: &impl GenericClient,
    older_than: Duration,
    batch: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_ADMISSIONS).await?;
    Ok(client.execute(&statement, &[&millis(older_than), &limit(batch)]).await?)
}
