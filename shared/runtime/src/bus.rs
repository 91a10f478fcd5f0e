//! Completion events on an EventBridge bus (`AITASK_EVENT_BUS_NAME`, docs/events.md), beside the
//! events queue: `PutEvents`, at most 10 entries a call, `source` configurable (`aitasks`),
//! `detail-type` by status, `detail` the event's payload. Entries EventBridge did not take (a
//! partial failure, a throttled call) are sent again at once, twice; what still fails is left
//! undelivered for the sweeper.

use std::time::Duration;

use aitasks_contracts::TaskStatus;
use aitasks_store::PendingEvent;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;

use crate::config::EventBus;

/// Entries per `PutEvents`, the most EventBridge takes.
const ENTRIES_PER_CALL: usize = 10;
/// Sends of what failed, after the first.
const RESENDS: usize = 2;

/// The `detail-type` of an event: `AI Task Succeeded`, `AI Task Failed`, `AI Task Canceled`.
pub fn detail_type(event: &PendingEvent) -> &'static str {
    match event.payload["status"].as_str().and_then(TaskStatus::parse) {
        Some(TaskStatus::Succeeded) => "AI Task Succeeded",
        Some(TaskStatus::Canceled) => "AI Task Canceled",
        _ => "AI Task Failed",
    }
}

/// The bus and its client.
#[derive(Debug, Clone)]
pub struct Bus {
    client: aws_sdk_eventbridge::Client,
    settings: EventBus,
}

impl Bus {
    pub fn new(client: aws_sdk_eventbridge::Client, settings: EventBus) -> Bus {
        Bus { client, settings }
    }

    /// Put the events on the bus; the ids of those it took.
    pub async fn put(&self, events: &[PendingEvent]) -> Vec<i64> {
        let mut delivered = Vec::with_capacity(events.len());
        for chunk in events.chunks(ENTRIES_PER_CALL) {
            let mut pending: Vec<&PendingEvent> = chunk.iter().collect();
            for send in 0..=RESENDS {
                if send > 0 {
                    tokio::time::sleep(Duration::from_millis(100 << send)).await;
                }
                pending = self.put_once(&pending, &mut delivered).await;
                if pending.is_empty() {
                    break;
                }
            }
            if !pending.is_empty() {
                tracing::warn!(
                    events = pending.len(),
                    "EventBridge did not take some events; the sweeper sends them again"
                );
            }
        }
        delivered
    }

    /// One `PutEvents`; the events it did not take.
    async fn put_once<'a>(
        &self,
        events: &[&'a PendingEvent],
        delivered: &mut Vec<i64>,
    ) -> Vec<&'a PendingEvent> {
        let entries: Vec<PutEventsRequestEntry> = events
            .iter()
            .map(|event| {
                PutEventsRequestEntry::builder()
                    .event_bus_name(&self.settings.name)
                    .source(&self.settings.source)
                    .detail_type(detail_type(event))
                    .detail(event.payload.to_string())
                    .build()
            })
            .collect();
        match self.client.put_events().set_entries(Some(entries)).send().await {
            Ok(output) => {
                let mut failed = Vec::new();
                // One result per entry, in order; one with an error code was not taken.
                for (event, result) in events.iter().zip(output.entries()) {
                    if result.error_code().is_some() {
                        failed.push(*event);
                    } else {
                        delivered.push(event.id);
                    }
                }
                // Fewer results than entries: the missing ones were not taken either.
                failed.extend(events.iter().skip(output.entries().len()).copied());
                failed
            }
            Err(error) => {
                tracing::warn!(error = %crate::error_chain(&error), "PutEvents failed");
                events.to_vec()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_detail_type_follows_the_status() {
        let event = |status: &str| PendingEvent {
            id: 1,
            task_id: uuid::Uuid::nil(),
            payload: json!({"status": status}),
            custody: aitasks_store::Custody::Outbox,
        };
        assert_eq!(detail_type(&event("succeeded")), "AI Task Succeeded");
        assert_eq!(detail_type(&event("failed")), "AI Task Failed");
        assert_eq!(detail_type(&event("canceled")), "AI Task Canceled");
    }
}
