//! The completion-event outbox. Every terminal transition writes its event in the same
//! statement; its writer delivers it after commit (App::publish) and marks it delivered, and the
//! sweeper re-delivers whatever was not marked within the grace period. A worker's completion
//! hands its event over instead ([`crate::Custody::HandedOver`], migrations/V41): written
//! delivered, handed back only when its publish fails ([`hand_back`]), and taken back by the
//! worker that receives the task's message again after the task ended ([`take_handed_over`]).
//! Delivery is at least once.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::error::StoreResult;
use crate::model::PendingEvent;
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{
    HAND_BACK, HAND_BACK_RECENT, MARK_DELIVERED, NEWEST_HANDED_OVER, PRUNE_DELIVERED_EVENTS,
    TAKE_HANDED_OVER, TAKE_UNDELIVERED_EVENTS,
};
use crate::rows::event_from_row;

/// Take a page of undelivered events whose grace has passed, hiding them from other sweepers
/// for `lease` (`sql/events/take_undelivered_events.sql`). Events not marked delivered by then come back.
pub async fn take_undelivered_events(
    client: &impl GenericClient,
    lease: Duration,
    page: usize,
) -> StoreResult<Vec<PendingEvent>> {
    let statement = client.prepare_cached(TAKE_UNDELIVERED_EVENTS.text()).await?;
    let (lease_ms, page) = (millis(lease), limit(page));
    let params = TAKE_UNDELIVERED_EVENTS.bind(&[("lease_ms", &lease_ms), ("page", &page)])?;
    client.query(&statement, &params).await?.iter().map(event_from_row).collect()
}

/// Mark events delivered (the events queue acknowledged them).
pub async fn mark_delivered(client: &impl GenericClient, event_ids: &[i64]) -> StoreResult<u64> {
    if event_ids.is_empty() {
        return Ok(0);
    }
    let statement = client.prepare_cached(MARK_DELIVERED.text()).await?;
    Ok(client.execute(&statement, &MARK_DELIVERED.bind(&[("event_ids", &event_ids)])?).await?)
}

/// Events handed over to a publish that failed, given back to the outbox: undelivered, due to the
/// sweeper at once (`sql/events/hand_back.sql`). Answers how many were handed back.
pub async fn hand_back(client: &impl GenericClient, event_ids: &[i64]) -> StoreResult<u64> {
    if event_ids.is_empty() {
        return Ok(0);
    }
    let statement = client.prepare_cached(HAND_BACK.text()).await?;
    Ok(client.execute(&statement, &HAND_BACK.bind(&[("event_ids", &event_ids)])?).await?)
}

/// When the newest event still handed over was written (`sql/events/newest_handed_over.sql`).
pub async fn newest_handed_over(client: &impl GenericClient) -> StoreResult<Option<DateTime<Utc>>> {
    let statement = client.prepare_cached(NEWEST_HANDED_OVER.text()).await?;
    Ok(client.query_one(&statement, &[]).await?.try_get("newest")?)
}

/// A page of the events handed over after `since`, given back to the outbox
/// (`sql/events/hand_back_recent.sql`): for a local stack whose queue lost its messages. Answers
/// how many.
pub async fn hand_back_recent(
    client: &impl GenericClient,
    since: DateTime<Utc>,
    page: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(HAND_BACK_RECENT.text()).await?;
    let page = limit(page);
    let params = HAND_BACK_RECENT.bind(&[("since", &since), ("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}

/// A handed-over event taken back for publishing again ([`take_handed_over`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TakenBack {
    /// The outbox's now (undelivered, hidden from the sweeper for the take's lease), unless
    /// `rebuilt`.
    pub event: PendingEvent,
    /// Its row was pruned already: the event is rebuilt from its task, and nothing in the store
    /// stands behind it, so the message that brought it must stay until it is out.
    pub rebuilt: bool,
}

/// The event of an ended task whose SQS message came back, if it was handed over to a publish
/// that may have died: taken back for the caller to publish now, hidden from the sweeper for
/// `lease` (`sql/events/take_handed_over.sql`). `None` when there is nothing to send again.
pub async fn take_handed_over(
    client: &impl GenericClient,
    task_id: uuid::Uuid,
    lease: Duration,
) -> StoreResult<Option<TakenBack>> {
    let statement = client.prepare_cached(TAKE_HANDED_OVER.text()).await?;
    let lease_ms = millis(lease);
    let params = TAKE_HANDED_OVER.bind(&[("task_id", &task_id), ("lease_ms", &lease_ms)])?;
    let Some(row) = client.query_opt(&statement, &params).await? else { return Ok(None) };
    Ok(Some(TakenBack { event: event_from_row(&row)?, rebuilt: row.try_get("rebuilt")? }))
}

/// Delete delivered events older than `older_than`.
pub async fn prune_delivered_events(
    client: &impl GenericClient,
    older_than: Duration,
    page: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_DELIVERED_EVENTS.text()).await?;
    let (older_than_ms, page) = (millis(older_than), limit(page));
    let params = PRUNE_DELIVERED_EVENTS.bind(&[("older_than_ms", &older_than_ms), ("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}
