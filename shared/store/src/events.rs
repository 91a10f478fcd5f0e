//! The completion-event outbox. Every terminal transition writes its event in the same
//! statement; the worker publishes it after commit and marks it delivered, and the sweeper
//! re-delivers whatever was not marked within the grace period. Delivery is at least once.

use std::time::Duration;

use crate::model::PendingEvent;
use crate::pool::GenericClient;
use crate::sql::{limit, millis};
use crate::StoreResult;

const LEASE_PENDING: &str =
    "UPDATE task_events SET available_at = now() + $1::bigint * interval '1 millisecond' \
     WHERE id IN (SELECT id FROM task_events WHERE delivered_at IS NULL AND available_at <= now() \
     ORDER BY available_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) \
     RETURNING id, task_id, payload";

const MARK_DELIVERED: &str =
    "UPDATE task_events SET delivered_at = now() WHERE id = ANY($1) AND delivered_at IS NULL";

const PRUNE_DELIVERED: &str = "DELETE FROM task_events WHERE id IN ( \
     SELECT id FROM task_events WHERE delivered_at < now() - $1::bigint * interval '1 millisecond' \
     ORDER BY delivered_at LIMIT $2 FOR UPDATE SKIP LOCKED)";

/// Take a batch of undelivered events whose grace has passed, hiding them from other sweepers
/// for `lease`. Events not marked delivered within the lease come back.
pub async fn lease_pending_events(
    client: &impl GenericClient,
    lease: Duration,
    batch: usize,
) -> StoreResult<Vec<PendingEvent>> {
    let statement = client.prepare_cached(LEASE_PENDING).await?;
    let rows = client.query(&statement, &[&millis(lease), &limit(batch)]).await?;
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
    let statement = client.prepare_cached(MARK_DELIVERED).await?;
    Ok(client.execute(&statement, &[&event_ids]).await?)
}

/// Delete delivered events older than `older_than`.
pub async fn prune_delivered_events(
    client: &impl GenericClient,
    older_than: Duration,
    batch: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_DELIVERED).await?;
    Ok(client.execute(&statement, &[&millis(older_than), &limit(batch)]).await?)
}
