//! What the store knows of a batch's copies at the provider (`sql/batch_copies/`, migrations/V25):
//! the submits sent for a batch row (counted before each is sent, so a look after a lost answer
//! knows the provider may have a batch), the provider's batches that are already ours (a lookup
//! passes them by), the extra batches made for a row, and the clean-up of an ended batch's
//! copies there (its files, its batch and its extras), in bounded pages.

use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreResult;
use crate::params::{limit, millis, truncate_message};
use crate::pool::GenericClient;
use crate::queries::{
    ADD_EXTRA_BATCHES, KNOWN_PROVIDER_BATCHES, NEXT_BATCH_CLEANUP, NOTE_SUBMIT_REFUSED, NOTE_SUBMIT_SENDING,
    OTHER_ROWS_UNSURE, TAKE_BATCH_LEFTOVERS,
};

/// A submit of batch `batch_id` is about to be sent: counted (and the first one's time kept).
pub async fn note_submit_sending(client: &impl GenericClient, batch_id: Uuid) -> StoreResult<()> {
    let statement = client.prepare_cached(NOTE_SUBMIT_SENDING.text()).await?;
    client.execute(&statement, &NOTE_SUBMIT_SENDING.bind(&[("batch_id", &batch_id)])?).await?;
    Ok(())
}

/// A submit the provider refused (it answered, and made no batch): counted back.
pub async fn note_submit_refused(client: &impl GenericClient, batch_id: Uuid) -> StoreResult<()> {
    let statement = client.prepare_cached(NOTE_SUBMIT_REFUSED.text()).await?;
    client.execute(&statement, &NOTE_SUBMIT_REFUSED.bind(&[("batch_id", &batch_id)])?).await?;
    Ok(())
}

/// Whether another batch row of `profile` may still have a submit of unknown outcome, its first
/// sent before `until`: a batch that matches what `batch_id` sent may then be that row's.
pub async fn other_rows_unsure(
    client: &impl GenericClient,
    profile: &str,
    batch_id: Uuid,
    until: chrono::DateTime<chrono::Utc>,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(OTHER_ROWS_UNSURE.text()).await?;
    let params = OTHER_ROWS_UNSURE.bind(&[
        ("profile", &profile as &(dyn tokio_postgres::types::ToSql + Sync)),
        ("batch_id", &batch_id),
        ("until", &until),
    ])?;
    let count: i64 = client.query_one(&statement, &params).await?.get(0);
    Ok(count > 0)
}

/// Which of the provider's batch ids `ids` are already ours: a batch row's, or an extra of one.
pub async fn known_provider_batches(client: &impl GenericClient, ids: &[String]) -> StoreResult<Vec<String>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let statement = client.prepare_cached(KNOWN_PROVIDER_BATCHES.text()).await?;
    let ids = ids.to_vec();
    let rows = client.query(&statement, &KNOWN_PROVIDER_BATCHES.bind(&[("ids", &ids)])?).await?;
    rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
}

/// The provider's batches made for `batch_id` beyond the one adopted: deleted with it.
pub async fn add_extra_batches(
    client: &impl GenericClient,
    batch_id: Uuid,
    extras: &[String],
) -> StoreResult<()> {
    let statement = client.prepare_cached(ADD_EXTRA_BATCHES.text()).await?;
    let extras = extras.to_vec();
    client
        .execute(&statement, &ADD_EXTRA_BATCHES.bind(&[("batch_id", &batch_id), ("extras", &extras)])?)
        .await?;
    Ok(())
}

/// An ended batch whose copies at the provider are due for deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchLeftovers {
    pub id: Uuid,
    pub profile: String,
    /// The provider's batch (none: it never took one; only extras, if any, are left).
    pub provider_batch_id: Option<String>,
    /// Batches made for it beyond the adopted one.
    pub extra_batch_ids: Vec<String>,
    /// Clean-ups taken, this one included.
    pub tries: i32,
    /// What was sent for it: how many requests at most, how many submits, the first one's time,
    /// and when the provider's answer was recorded (no submit went out after that).
    pub records: i32,
    pub submits: i32,
    pub submit_sent_at: Option<DateTime<Utc>>,
    pub submitted_at: Option<DateTime<Utc>>,
}

/// Up to `page` ended batches whose copies at the provider are due for deletion, each leased for
/// `lease` from other sweepers.
pub async fn take_batch_leftovers(
    client: &impl GenericClient,
    lease: Duration,
    page: usize,
) -> StoreResult<Vec<BatchLeftovers>> {
    let statement = client.prepare_cached(TAKE_BATCH_LEFTOVERS.text()).await?;
    let (lease_ms, page) = (millis(lease), limit(page));
    let rows = client
        .query(&statement, &TAKE_BATCH_LEFTOVERS.bind(&[("lease_ms", &lease_ms), ("page", &page)])?)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(BatchLeftovers {
                id: row.try_get("id")?,
                profile: row.try_get("profile")?,
                provider_batch_id: row.try_get("provider_batch_id")?,
                extra_batch_ids: row.try_get("extra_batch_ids")?,
                tries: row.try_get("cleanup_tries")?,
                records: row.try_get("records")?,
                submits: row.try_get("submits")?,
                submit_sent_at: row.try_get("submit_sent_at")?,
                submitted_at: row.try_get("submitted_at")?,
            })
        })
        .collect()
}

/// The clean-up of an ended batch: done (`after` none: nothing left at the provider, or given
/// up), or tried again after `after`, keeping `error` (a failed call) for the record.
pub async fn next_batch_cleanup(
    client: &impl GenericClient,
    batch_id: Uuid,
    after: Option<Duration>,
    error: Option<&str>,
) -> StoreResult<()> {
    let statement = client.prepare_cached(NEXT_BATCH_CLEANUP.text()).await?;
    let after_ms = after.map(millis);
    let error = error.map(truncate_message);
    let params =
        NEXT_BATCH_CLEANUP.bind(&[("batch_id", &batch_id), ("after_ms", &after_ms), ("error", &error)])?;
    client.execute(&statement, &params).await?;
    Ok(())
}
