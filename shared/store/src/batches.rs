//! Deferred tasks and the provider batches that carry them (`sql/batch/`): a profile's tasks
//! awaiting a batch are grouped and a batch opened for them (or they are sent on-demand), an
//! open batch is looked at when due, and what its results do not settle goes back to the queue.
//! A batch's tasks hold an attempt's lease like a worker's claim, so a result settles its task
//! through the same fenced statements as any attempt (`crate::settle`), and a duplicate or late
//! result changes nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::{new_id, Lease};
use crate::params::{limit, millis};
use crate::pool::{Client, GenericClient};
use crate::queries::{
    BATCH_AWAITING, BATCH_END, BATCH_GIVE_BACK, BATCH_GIVE_BACK_FOR_REPAIR, BATCH_LOOK_LATER, BATCH_LOOK_NOW,
    BATCH_NEAREST_WINDOW, BATCH_OPEN, BATCH_PRUNE_ENDED, BATCH_READY, BATCH_READ_REPAIR, BATCH_ROUTE_DUE,
    BATCH_ROUTE_NOW, BATCH_ROUTE_PROFILE, BATCH_SUBMITTED, BATCH_TAKE_DUE, BATCH_TAKE_REPAIR, BATCH_TASKS_OF,
    BATCH_WAITING,
};
use crate::sweep::OwedMessage;

/// How one profile's batches are formed (its `batch` settings in `AITASK_MODELS`).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGroup<'a> {
    pub profile: &'a str,
    /// `openai`, `anthropic` or `bedrock`.
    pub provider: &'a str,
    pub max_records: u32,
    /// What one batch's requests may hold in all, as stored.
    pub max_bytes: u64,
    pub max_wait: Duration,
    /// Fewer tasks than this run on-demand instead (a provider's minimum, Bedrock's 100).
    pub min_records: u32,
    /// The last part of a task's window, kept to run it on-demand if its batch has not answered.
    pub slack: Duration,
}

/// What a look at a profile's awaiting tasks did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Formed {
    /// None await a batch (or another batcher holds them).
    Nothing,
    /// Not yet: the group is below `maxRecords` and its oldest has waited less than `maxWaitSeconds`.
    Waiting,
    /// A batch was opened (`submitting`) for this many tasks.
    Opened { batch_id: Uuid, tasks: usize },
    /// Below `minRecords` after the wait: these run on-demand (their messages are the caller's to send).
    SentNow(Vec<OwedMessage>),
}

/// Look at one profile's tasks awaiting a batch, oldest first, and open a batch for them when
/// the group is full (`maxRecords`, or a file's worth of bytes) or its oldest has waited
/// `maxWaitSeconds`; below `minRecords` then, send them on-demand. An unlocked look first
/// (`ready.sql`): a group still waiting is left alone, no row locked. Then one transaction: the
/// rows are locked (SKIP LOCKED) from the look to the commit.
pub async fn form_batch(client: &mut Client, group: &BatchGroup<'_>) -> StoreResult<Formed> {
    let max_records = i64::from(group.max_records);
    let max_bytes = i64::try_from(group.max_bytes).unwrap_or(i64::MAX);
    if let Some(not_yet) = not_ready(client, group, max_records, max_bytes).await? {
        return Ok(not_yet);
    }
    let transaction = client.transaction().await?;
    let statement = transaction.prepare_cached(BATCH_AWAITING.text()).await?;
    let slack_ms = millis(group.slack);
    let params = BATCH_AWAITING.bind(&[
        ("profile", &group.profile),
        ("max_records", &max_records),
        ("max_bytes", &max_bytes),
        ("slack_ms", &slack_ms),
    ])?;
    let rows = transaction.query(&statement, &params).await?;
    let Some(first) = rows.first() else {
        transaction.rollback().await?;
        return Ok(Formed::Nothing);
    };
    let picked: i64 = first.try_get("picked_count")?;
    let waited_ms: f64 = first.try_get("waited_ms")?;
    let ids: Vec<Uuid> = rows.iter().map(|row| row.try_get("id")).collect::<Result<_, _>>()?;
    let full = ids.len() as i64 >= max_records || (ids.len() as i64) < picked;
    if !full && waited_ms < group.max_wait.as_millis() as f64 {
        transaction.rollback().await?;
        return Ok(Formed::Waiting);
    }
    if ids.len() < group.min_records as usize {
        let statement = transaction.prepare_cached(BATCH_ROUTE_NOW.text()).await?;
        let rows = transaction.query(&statement, &BATCH_ROUTE_NOW.bind(&[("task_ids", &ids)])?).await?;
        let owed = rows.iter().map(OwedMessage::from_row).collect::<StoreResult<Vec<_>>>()?;
        transaction.commit().await?;
        return Ok(Formed::SentNow(owed));
    }
    let batch_id = new_id();
    let statement = transaction.prepare_cached(BATCH_OPEN.text()).await?;
    let params = BATCH_OPEN.bind(&[
        ("batch_id", &batch_id),
        ("profile", &group.profile),
        ("provider", &group.provider),
        ("task_ids", &ids),
        ("slack_ms", &slack_ms),
    ])?;
    let claimed = transaction.query(&statement, &params).await?.len();
    transaction.commit().await?;
    Ok(Formed::Opened { batch_id, tasks: claimed })
}

/// What the unlocked look says when no batch will form now: none await ([`Formed::Nothing`]), or
/// the group is below `maxRecords` and a file's worth of bytes and its oldest has waited less
/// than `maxWaitSeconds` ([`Formed::Waiting`]). `None`: it may be ready, lock and look.
async fn not_ready(
    client: &impl GenericClient,
    group: &BatchGroup<'_>,
    max_records: i64,
    max_bytes: i64,
) -> StoreResult<Option<Formed>> {
    let statement = client.prepare_cached(BATCH_READY.text()).await?;
    let params = BATCH_READY.bind(&[
        ("profile", &group.profile),
        ("max_records", &max_records),
        ("max_bytes", &max_bytes),
    ])?;
    let row = client.query_one(&statement, &params).await?;
    let awaiting: i64 = row.try_get("awaiting")?;
    if awaiting == 0 {
        return Ok(Some(Formed::Nothing));
    }
    let waited_ms: Option<f64> = row.try_get("waited_ms")?;
    let bytes: Option<i64> = row.try_get("bytes")?;
    let full = awaiting >= max_records || bytes.is_some_and(|bytes| bytes > max_bytes);
    let waited = waited_ms.is_some_and(|waited| waited >= group.max_wait.as_millis() as f64);
    Ok((!full && !waited).then_some(Formed::Waiting))
}

/// A page of one profile's tasks awaiting a batch, sent on-demand (the profile no longer
/// batches). Their messages are the caller's to send.
pub async fn send_profile_now(
    client: &impl GenericClient,
    profile: &str,
    page: usize,
) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(BATCH_ROUTE_PROFILE.text()).await?;
    let page = limit(page);
    let rows = client
        .query(&statement, &BATCH_ROUTE_PROFILE.bind(&[("profile", &profile), ("page", &page)])?)
        .await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// A page of tasks awaiting a batch whose window ends within `slack`, sent on-demand.
pub async fn send_due_now(
    client: &impl GenericClient,
    slack: Duration,
    page: usize,
) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(BATCH_ROUTE_DUE.text()).await?;
    let (slack_ms, page) = (millis(slack), limit(page));
    let rows =
        client.query(&statement, &BATCH_ROUTE_DUE.bind(&[("slack_ms", &slack_ms), ("page", &page)])?).await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// Where an open batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchState {
    /// Recorded, its tasks claimed; the provider may or may not have it yet.
    Submitting,
    /// The provider has it.
    Submitted,
}

/// An open batch taken for a look.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenBatch {
    pub id: Uuid,
    pub profile: String,
    pub provider: String,
    pub state: BatchState,
    pub provider_batch_id: Option<String>,
    pub records: i32,
    pub give_up_at: DateTime<Utc>,
    /// Past `give_up_at`: what has not answered runs on-demand now.
    pub given_up: bool,
    /// Looks taken, this one included.
    pub tries: i32,
    pub created_at: DateTime<Utc>,
}

/// Up to `page` open batches due for a look, each held for `hold` from other batchers.
pub async fn take_due_batches(
    client: &impl GenericClient,
    hold: Duration,
    page: usize,
) -> StoreResult<Vec<OpenBatch>> {
    let statement = client.prepare_cached(BATCH_TAKE_DUE.text()).await?;
    let (hold_ms, page) = (millis(hold), limit(page));
    let rows =
        client.query(&statement, &BATCH_TAKE_DUE.bind(&[("hold_ms", &hold_ms), ("page", &page)])?).await?;
    rows.iter()
        .map(|row| {
            let state = match row.try_get::<_, &str>("state")? {
                "submitting" => BatchState::Submitting,
                "submitted" => BatchState::Submitted,
                other => return Err(StoreError::Corrupt(format!("open batch state {other:?}"))),
            };
            Ok(OpenBatch {
                id: row.try_get("id")?,
                profile: row.try_get("profile")?,
                provider: row.try_get("provider")?,
                state,
                provider_batch_id: row.try_get("provider_batch_id")?,
                records: row.try_get("records")?,
                give_up_at: row.try_get("give_up_at")?,
                given_up: row.try_get("given_up")?,
                tries: row.try_get("tries")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .collect()
}

/// A task still running in a batch: its lease, its request, and what a failed line's retry
/// decision needs.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchTask {
    pub lease: Lease,
    pub app_id: String,
    pub request: Value,
    pub max_attempts: i32,
    pub created_at: DateTime<Utc>,
    pub deferred_by: Option<DateTime<Utc>>,
}

/// The tasks still running in a batch, in id order (at most its `records`).
pub async fn batch_tasks(client: &impl GenericClient, batch_id: Uuid) -> StoreResult<Vec<BatchTask>> {
    let statement = client.prepare_cached(BATCH_TASKS_OF.text()).await?;
    let rows = client.query(&statement, &BATCH_TASKS_OF.bind(&[("batch_id", &batch_id)])?).await?;
    rows.iter()
        .map(|row| {
            Ok(BatchTask {
                lease: Lease {
                    task_id: row.try_get("id")?,
                    attempt: row.try_get("attempts")?,
                    scoped: row.try_get("scoped")?,
                },
                app_id: row.try_get("app_id")?,
                request: row.try_get("request")?,
                max_attempts: row.try_get("max_attempts")?,
                created_at: row.try_get("created_at")?,
                deferred_by: row.try_get("deferred_by")?,
            })
        })
        .collect()
}

/// The provider has the batch (`provider_batch_id`); the first poll after `poll`. False when it
/// was not `submitting` any more (another batcher recorded it, or it ended).
pub async fn mark_batch_submitted(
    client: &impl GenericClient,
    batch_id: Uuid,
    provider_batch_id: &str,
    poll: Duration,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(BATCH_SUBMITTED.text()).await?;
    let poll_ms = millis(poll);
    let params = BATCH_SUBMITTED.bind(&[
        ("batch_id", &batch_id),
        ("provider_batch_id", &provider_batch_id),
        ("poll_ms", &poll_ms),
    ])?;
    Ok(client.execute(&statement, &params).await? == 1)
}

/// Look at an open batch again after `after`, keeping `error` (a failed call) for the record.
pub async fn look_at_batch_later(
    client: &impl GenericClient,
    batch_id: Uuid,
    after: Duration,
    error: Option<&str>,
) -> StoreResult<()> {
    let statement = client.prepare_cached(BATCH_LOOK_LATER.text()).await?;
    let after_ms = millis(after);
    let error = error.map(crate::params::truncate_message);
    let params =
        BATCH_LOOK_LATER.bind(&[("batch_id", &batch_id), ("after_ms", &after_ms), ("error", &error)])?;
    client.execute(&statement, &params).await?;
    Ok(())
}

/// The provider said the job `provider_batch_id` changed state: its open batch, waiting for a
/// poll every `poll`, is due now. Whether one was (an unknown id, an ended batch, or one a
/// batcher holds changes nothing).
pub async fn look_at_batch_now(
    client: &impl GenericClient,
    provider_batch_id: &str,
    poll: Duration,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(BATCH_LOOK_NOW.text()).await?;
    let poll_ms = millis(poll);
    let params = BATCH_LOOK_NOW.bind(&[("provider_batch_id", &provider_batch_id), ("poll_ms", &poll_ms)])?;
    Ok(client.execute(&statement, &params).await? == 1)
}

/// How a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOutcome {
    /// The provider answered it (some lines may have failed).
    Completed,
    /// The provider failed it.
    Failed,
    /// The provider's window passed first.
    Expired,
    Canceled,
    /// Its tasks' windows were near their end: the batcher stopped waiting.
    GivenUp,
    /// The provider never took it (its submit kept failing).
    Unsubmitted,
}

impl BatchOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            BatchOutcome::Completed => "completed",
            BatchOutcome::Failed => "failed",
            BatchOutcome::Expired => "expired",
            BatchOutcome::Canceled => "canceled",
            BatchOutcome::GivenUp => "given_up",
            BatchOutcome::Unsubmitted => "unsubmitted",
        }
    }
}

/// A batch is done with. False when it had ended already.
pub async fn end_batch(
    client: &impl GenericClient,
    batch_id: Uuid,
    outcome: BatchOutcome,
    error: Option<&str>,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(BATCH_END.text()).await?;
    let outcome = outcome.as_str();
    let error = error.map(crate::params::truncate_message);
    let params = BATCH_END.bind(&[("batch_id", &batch_id), ("outcome", &outcome), ("error", &error)])?;
    Ok(client.execute(&statement, &params).await? == 1)
}

/// The tasks still running in a batch go back to the queue for the on-demand path, the batch's
/// attempt uncounted. Their messages are the caller's to send.
pub async fn give_back_batch(client: &impl GenericClient, batch_id: Uuid) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(BATCH_GIVE_BACK.text()).await?;
    let rows = client.query(&statement, &BATCH_GIVE_BACK.bind(&[("batch_id", &batch_id)])?).await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// A batch's answer failed the checks: the task goes back to the queue with `resume`, what its
/// on-demand repair turn continues from. `None` when the lease is gone. Its message is the
/// caller's to send.
pub async fn give_back_for_repair(
    client: &impl GenericClient,
    batch_id: Uuid,
    lease: Lease,
    resume: &Value,
) -> StoreResult<Option<OwedMessage>> {
    let statement = client.prepare_cached(BATCH_GIVE_BACK_FOR_REPAIR.text()).await?;
    let params = BATCH_GIVE_BACK_FOR_REPAIR.bind(&[
        ("batch_id", &batch_id),
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("resume", resume),
    ])?;
    client.query_opt(&statement, &params).await?.as_ref().map(OwedMessage::from_row).transpose()
}

/// What this attempt's repair turn continues from, if a batch left one. Left in place: an
/// attempt given back unworked leaves it to the next claim (the same attempt number); one that
/// worked takes it ([`take_repair`]).
pub async fn read_repair(client: &impl GenericClient, lease: Lease) -> StoreResult<Option<Value>> {
    let statement = client.prepare_cached(BATCH_READ_REPAIR.text()).await?;
    let params = BATCH_READ_REPAIR.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?;
    Ok(match client.query_opt(&statement, &params).await? {
        Some(row) => Some(row.try_get("resume")?),
        None => None,
    })
}

/// This attempt's repair turn is spent (the attempt worked): a later attempt starts afresh.
/// False when there was none.
pub async fn take_repair(client: &impl GenericClient, lease: Lease) -> StoreResult<bool> {
    let statement = client.prepare_cached(BATCH_TAKE_REPAIR.text()).await?;
    let params = BATCH_TAKE_REPAIR.bind(&[("task_id", &lease.task_id), ("attempt", &lease.attempt)])?;
    Ok(client.execute(&statement, &params).await? == 1)
}

/// A page of batches ended longer ago than `older_than`, deleted. How many.
pub async fn prune_ended_batches(
    client: &impl GenericClient,
    older_than: Duration,
    page: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(BATCH_PRUNE_ENDED.text()).await?;
    let (older_than_ms, page) = (millis(older_than), limit(page));
    let params = BATCH_PRUNE_ENDED.bind(&[("older_than_ms", &older_than_ms), ("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}

/// One profile's deferred tasks awaiting a batch: how many (up to `cap`), and how long the oldest
/// has waited (milliseconds).
pub async fn batch_waiting(
    client: &impl GenericClient,
    profile: &str,
    cap: u64,
) -> StoreResult<(u64, Option<f64>)> {
    let statement = client.prepare_cached(BATCH_WAITING.text()).await?;
    let cap = i64::try_from(cap).unwrap_or(i64::MAX);
    let row =
        client.query_one(&statement, &BATCH_WAITING.bind(&[("profile", &profile), ("cap", &cap)])?).await?;
    let waiting: i64 = row.try_get("waiting")?;
    Ok((u64::try_from(waiting).unwrap_or(0), row.try_get("oldest_ms")?))
}

/// Milliseconds until the nearest window end of a deferred task not yet done (negative: passed);
/// `None` when there is none.
pub async fn nearest_window(client: &impl GenericClient, slack: Duration) -> StoreResult<Option<f64>> {
    let statement = client.prepare_cached(BATCH_NEAREST_WINDOW.text()).await?;
    let slack_ms = millis(slack);
    let row = client.query_one(&statement, &BATCH_NEAREST_WINDOW.bind(&[("slack_ms", &slack_ms)])?).await?;
    Ok(row.try_get("left_ms")?)
}
