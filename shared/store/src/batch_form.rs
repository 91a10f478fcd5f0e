//! Forming provider batches (`sql/batch_form/`): a profile's deferred tasks awaiting a batch are
//! grouped and a batch opened for them when the group is full or has waited long enough, or they
//! are sent on-demand (too few for the provider, a window near its end, a profile that no longer
//! batches). What follows an open batch is `batches.rs`.

use std::time::Duration;

use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::new_id;
use crate::params::{limit, millis};
use crate::pool::{Client, GenericClient};
use crate::queries::{
    BATCH_WAITING, FORM_BATCH_LOCK, FORM_BATCH_OPEN, FORM_BATCH_SEND_NOW, NEAREST_WINDOW, NOT_READY,
    SEND_DUE_NOW, SEND_PROFILE_NOW,
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
/// (`not_ready.sql`): a group still waiting is left alone, no row locked. Then one transaction: the
/// rows are locked (SKIP LOCKED) from the look to the commit.
pub async fn form_batch(client: &mut Client, group: &BatchGroup<'_>) -> StoreResult<Formed> {
    let max_records = i64::from(group.max_records);
    let max_bytes = i64::try_from(group.max_bytes).unwrap_or(i64::MAX);
    if let Some(not_yet) = not_ready(client, group, max_records, max_bytes).await? {
        return Ok(not_yet);
    }
    let transaction = client.transaction().await?;
    let statement = transaction.prepare_cached(FORM_BATCH_LOCK.text()).await?;
    let slack_ms = millis(group.slack);
    let params = FORM_BATCH_LOCK.bind(&[
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
        let statement = transaction.prepare_cached(FORM_BATCH_SEND_NOW.text()).await?;
        let rows = transaction.query(&statement, &FORM_BATCH_SEND_NOW.bind(&[("task_ids", &ids)])?).await?;
        let owed = rows.iter().map(OwedMessage::from_row).collect::<StoreResult<Vec<_>>>()?;
        transaction.commit().await?;
        return Ok(Formed::SentNow(owed));
    }
    let batch_id = new_id();
    let statement = transaction.prepare_cached(FORM_BATCH_OPEN.text()).await?;
    let params = FORM_BATCH_OPEN.bind(&[
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
    let statement = client.prepare_cached(NOT_READY.text()).await?;
    let params = NOT_READY.bind(&[
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
    let statement = client.prepare_cached(SEND_PROFILE_NOW.text()).await?;
    let page = limit(page);
    let rows =
        client.query(&statement, &SEND_PROFILE_NOW.bind(&[("profile", &profile), ("page", &page)])?).await?;
    rows.iter().map(OwedMessage::from_row).collect()
}

/// A page of tasks awaiting a batch whose window ends within `slack`, sent on-demand.
pub async fn send_due_now(
    client: &impl GenericClient,
    slack: Duration,
    page: usize,
) -> StoreResult<Vec<OwedMessage>> {
    let statement = client.prepare_cached(SEND_DUE_NOW.text()).await?;
    let (slack_ms, page) = (millis(slack), limit(page));
    let rows =
        client.query(&statement, &SEND_DUE_NOW.bind(&[("slack_ms", &slack_ms), ("page", &page)])?).await?;
    rows.iter().map(OwedMessage::from_row).collect()
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
    let statement = client.prepare_cached(NEAREST_WINDOW.text()).await?;
    let slack_ms = millis(slack);
    let row = client.query_one(&statement, &NEAREST_WINDOW.bind(&[("slack_ms", &slack_ms)])?).await?;
    Ok(row.try_get("left_ms")?)
}
