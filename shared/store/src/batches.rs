//! The provider batches that carry deferred tasks (`sql/batches/`), once formed
//! (`batch_form.rs`): an open batch is looked at when due, recorded as submitted, ended, and
//! what its results do not settle goes back to the queue.
//! A batch's tasks hold an attempt's lease like a worker's claim, so a result settles its task
//! through the same fenced statements as any attempt (`crate::settle`), and a duplicate or late
//! result changes nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::Lease;
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{
    BATCH_TASKS, END_BATCH, GIVE_BACK_BATCH, LOOK_AT_BATCH_LATER, LOOK_AT_BATCH_NOW, MARK_BATCH_SUBMITTED,
    PRUNE_ENDED_BATCHES, TAKE_DUE_BATCHES,
};
use crate::sweep::OwedMessage;

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
    /// Submits sent so far (each counted before it went out), and when the first went out: a
    /// submit not recorded `submitted` may have made a batch at the provider all the same.
    pub submits: i32,
    pub submit_sent_at: Option<DateTime<Utc>>,
}

/// Up to `page` open batches due for a look, each leased for `lease` from other batchers.
pub async fn take_due_batches(
    client: &impl GenericClient,
    lease: Duration,
    page: usize,
) -> StoreResult<Vec<OpenBatch>> {
    let statement = client.prepare_cached(TAKE_DUE_BATCHES.text()).await?;
    let (lease_ms, page) = (millis(lease), limit(page));
    let rows = client
        .query(&statement, &TAKE_DUE_BATCHES.bind(&[("lease_ms", &lease_ms), ("page", &page)])?)
        .await?;
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
                submits: row.try_get("submits")?,
                submit_sent_at: row.try_get("submit_sent_at")?,
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
    let statement = client.prepare_cached(BATCH_TASKS.text()).await?;
    let rows = client.query(&statement, &BATCH_TASKS.bind(&[("batch_id", &batch_id)])?).await?;
    rows.iter()
        .map(|row| {
            Ok(BatchTask {
                lease: Lease {
                    task_id: row.try_get("id")?,
                    attempt: row.try_get("attempts")?,
                    scoped: row.try_get("scoped")?,
                    batch_id: Some(batch_id),
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
    let statement = client.prepare_cached(MARK_BATCH_SUBMITTED.text()).await?;
    let poll_ms = millis(poll);
    let params = MARK_BATCH_SUBMITTED.bind(&[
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
    let statement = client.prepare_cached(LOOK_AT_BATCH_LATER.text()).await?;
    let after_ms = millis(after);
    let error = error.map(crate::params::truncate_message);
    let params =
        LOOK_AT_BATCH_LATER.bind(&[("batch_id", &batch_id), ("after_ms", &after_ms), ("error", &error)])?;
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
    let statement = client.prepare_cached(LOOK_AT_BATCH_NOW.text()).await?;
    let poll_ms = millis(poll);
    let params =
        LOOK_AT_BATCH_NOW.bind(&[("provider_batch_id", &provider_batch_id), ("poll_ms", &poll_ms)])?;
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
    let statement = client.prepare_cached(END_BATCH.text()).await?;
    let outcome = outcome.as_str();
    let error = error.map(crate::params::truncate_message);
    let params = END_BATCH.bind(&[("batch_id", &batch_id), ("outcome", &outcome), ("error", &error)])?;
    Ok(client.execute(&statement, &params).await? == 1)
}

/// The tasks still running in a batch go back to the queue for the on-demand path, the batch's
/// attempt uncounted. Their messages are the caller's to send.
pub async fn give_back_batch(client: &impl GenericClient, batch_id: Uuid) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(GIVE_BACK_BATCH.text()).await?;
    let rows = client.query(&statement, &GIVE_BACK_BATCH.bind(&[("batch_id", &batch_id)])?).await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// A page of batches ended longer ago than `older_than`, deleted. How many.
pub async fn prune_ended_batches(
    client: &impl GenericClient,
    older_than: Duration,
    page: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_ENDED_BATCHES.text()).await?;
    let (older_than_ms, page) = (millis(older_than), limit(page));
    let params = PRUNE_ENDED_BATCHES.bind(&[("older_than_ms", &older_than_ms), ("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}
