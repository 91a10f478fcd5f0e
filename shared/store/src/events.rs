//! The completion-event outbox. Every terminal transition writes its event in the same
//! statement; the worker publishes it after commit and marks it delivered, and the sweeper
//! re-delivers whatever was not marked within the grace period. Delivery is at least once.

use std::time::Duration;

use crate::model::PendingEvent;
use crate::pool::GenericClient;
use crate::queries::{LEASE_PENDING, MARK_DELIVERED, PRUNE_DELIVERED};
use crate::sql::{limit, millis};
use crate::StoreResult;

/// Take a batch of undelivered events whose grace has passed, hiding them from other sweepers
/// for `lease`. Events not marked delivered within the lease come back.
pub async fn lease_pending_events(
    client: &impl GenericClient,
    lease: Duration,
    batch: usize,
) -> StoreResult<Vec<PendingEvent>> {
    let statement = client.prepare_cached(LEASE_PENDING.text()).await?;
    let (lease_ms, batch) = (millis(lease), limit(batch));
    let rows =
        client.query(&statement, &LEASE_PENDING.bind(&[("lease_ms", &lease_ms), ("batch", &batch)])?).await?;
    rows.iter()
        .map(|row| {
            Ok(PendingEvent {
                id: row.try_get("id")?,
                task_id: row.try_get("task_id")?,
                payload: row.try_get("payload")?,
            })
        })
        .collect()
}

/// Mark events delivered (the events queue acknowledged them).
pub async fn mark_delivered(client: &impl GenericClient, event_ids: &[i64]) -> StoreResult<u64> {
    if event_ids.is_empty() {
        return Ok(0);
    }
    let statement = client.prepare_cached(MARK_DELIVERED.text()).await?;
    Ok(client.execute(&statement, &MARK_DELIVERED.bind(&[("event_ids", &event_ids)])?).await?)
}

/// Delete delivered events older than `older_than`.
pub async fn prune_delivered_events(
    client: &impl GenericClient,
    older_than: Duration,
    batch: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_DELIVERED.text()).await?;
    let (older_than_ms, batch) = (millis(older_than), limit(batch));
    let params = PRUNE_DELIVERED.bind(&[("older_than_ms", &older_than_ms), ("batch", &batch)])?;
    Ok(client.execute(&statement, &params).await?)
}
