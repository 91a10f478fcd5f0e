//! Each tenant's read budget, shared by every instance of the API (docs/api.md, "Read rate"): a
//! token bucket in the tenant's row of `read_budgets` (migrations/V31), spent with one upsert.

use std::time::Duration;

use crate::error::StoreResult;
use crate::pool::GenericClient;
use crate::queries::SPEND_READS;

/// A tenant's bucket: `burst` units at most, refilled at `per_second` units a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadBucket {
    pub per_second: f64,
    pub burst: f64,
}

/// What a spend found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReadSpend {
    Spent,
    /// The bucket held too little: it will hold enough after this long.
    Short {
        refilled_in: Duration,
    },
}

/// Spend `units` of `app_id`'s read budget, if it holds them (`units` at most `bucket.burst`).
/// One round trip; only this tenant's spends wait on each other.
pub async fn spend_reads(
    client: &impl GenericClient,
    app_id: &str,
    units: f64,
    bucket: ReadBucket,
) -> StoreResult<ReadSpend> {
    let statement = client.prepare_cached(SPEND_READS.text()).await?;
    let params = SPEND_READS.bind(&[
        ("app_id", &app_id),
        ("units", &units),
        ("rate", &bucket.per_second),
        ("burst", &bucket.burst),
    ])?;
    let row = client.query_one(&statement, &params).await?;
    if row.try_get::<_, bool>("spent")? {
        return Ok(ReadSpend::Spent);
    }
    let held: f64 = row.try_get("tokens")?;
    let seconds = ((units - held) / bucket.per_second).max(0.0);
    Ok(ReadSpend::Short { refilled_in: Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX) })
}
