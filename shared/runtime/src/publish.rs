//! Publishing what a committed statement ended: its events sent out, then one statement for what
//! the publish leaves to write (docs/lifecycle.md, "Completion events"). An event of the outbox
//! is marked delivered once sent; an event handed over (a worker's completion, migrations/V41)
//! was written delivered, so a sent one costs no statement and only one that failed is handed
//! back to the sweeper. The callbacks the endings made owed are taken in the marking statement
//! and answered at once.

use std::time::Duration;

use aitasks_store::{self as store, Custody, PendingEvent};
use uuid::Uuid;

use crate::app::App;
use crate::callbacks;

/// How long an event taken back for publishing again is hidden from the sweeper: as long as the
/// sweeper's own take hides one (`sweeper::duties`), far longer than a publish takes.
const TAKEN_BACK_LEASE: Duration = Duration::from_secs(60);

/// What a publish leaves to write, from its events and the ids the destinations took.
#[derive(Debug, Default, PartialEq, Eq)]
struct AfterPublish {
    /// The outbox's events that went out: marked delivered.
    to_mark: Vec<i64>,
    /// Handed-over events that did not go out: handed back to the sweeper.
    to_hand_back: Vec<i64>,
    /// The tasks whose owed callbacks to take: every outbox event's (whether it owes any is not
    /// known), and each handed-over event's that said it owes some.
    callback_tasks: Vec<Uuid>,
}

impl AfterPublish {
    fn of(events: &[PendingEvent], delivered: &[i64]) -> AfterPublish {
        let mut after = AfterPublish::default();
        for event in events {
            let out = delivered.contains(&event.id);
            match event.custody {
                Custody::Outbox => {
                    if out {
                        after.to_mark.push(event.id);
                    }
                    after.callback_tasks.push(event.task_id);
                }
                Custody::HandedOver { owes_callbacks } => {
                    if !out {
                        after.to_hand_back.push(event.id);
                    }
                    if owes_callbacks {
                        after.callback_tasks.push(event.task_id);
                    }
                }
            }
        }
        after
    }
}

impl<P> App<P> {
    /// Publish the tasks these events ended, once their transitions committed: the events
    /// delivered ([`App::send_events_out`]), the outbox's marked delivered, the handed-over ones
    /// that did not go out handed back, and the callbacks the transitions made owed answered
    /// (taken in the statement that marks). Failures are logged and left to the sweeper, which
    /// re-delivers what is undelivered and answers what was not taken.
    ///
    /// Answers the tasks whose handed-over event is neither out nor handed back (the store was
    /// not there to take it back): nothing but their SQS message stands behind them now, so the
    /// caller must let that message come back rather than delete it. Empty for outbox events.
    pub async fn publish(&self, events: Vec<PendingEvent>) -> Vec<Uuid> {
        if events.is_empty() {
            return Vec::new();
        }
        let sending = std::time::Instant::now();
        let delivered = self.send_events_out(&events).await;
        let sent = sending.elapsed();
        let after = AfterPublish::of(&events, &delivered);
        let marking = std::time::Instant::now();
        let mut stranded = Vec::new();
        if !after.to_hand_back.is_empty() {
            let handed_back = async {
                let client = store::client(&self.pool).await?;
                store::hand_back(&client, &after.to_hand_back).await
            };
            if let Err(error) = handed_back.await {
                tracing::error!(error = %crate::error_chain(&error), "could not hand back the events a failed publish leaves; their tasks' messages bring them back");
                stranded = events
                    .iter()
                    .filter(|event| after.to_hand_back.contains(&event.id))
                    .map(|event| event.task_id)
                    .collect();
            }
        }
        if !after.to_mark.is_empty() || !after.callback_tasks.is_empty() {
            let marked = async {
                let client = store::client(&self.pool).await?;
                match &self.callbacks {
                    Some(callbacks) => {
                        let owed = store::mark_delivered_and_take_owed(
                            &client,
                            &after.to_mark,
                            &after.callback_tasks,
                            callbacks::LEASE,
                        )
                        .await?;
                        callbacks::answer_owed(callbacks, &client, owed).await.map(|_| ())
                    }
                    None => store::mark_delivered(&client, &after.to_mark).await.map(|_| ()),
                }
            };
            if let Err(error) = marked.await {
                tracing::warn!(error = %crate::error_chain(&error), "could not mark events delivered or answer their callbacks; the sweeper will");
            }
        }
        crate::metrics::published(events.len(), sent, marking.elapsed());
        stranded
    }

    /// A task's SQS message came back after the task ended: the event its completion handed
    /// over is published again, in case the worker that completed it died before its publish
    /// (`store::take_handed_over`). Nothing when it was not handed over, or was taken back
    /// already. What the take writes back is the outbox's, so a publish that fails now is the
    /// sweeper's. Answers whether the message may go: false when the event, rebuilt from its
    /// task after its row was pruned, did not go out (nothing else stands behind it). `Err`
    /// when the store is not there or asks for a retry: the message must come back again.
    pub(crate) async fn publish_again(&self, task_id: Uuid) -> Result<bool, store::StoreError> {
        let client = store::client(&self.pool).await?;
        let taken = match store::take_handed_over(&client, task_id, TAKEN_BACK_LEASE).await {
            Ok(Some(taken)) => taken,
            Ok(None) => return Ok(true),
            Err(error) if error.is_transient() => return Err(error),
            // Anything else will not pass on a retry (a schema older than the code, say): the
            // message would only cycle to the dead-letter queue.
            Err(error) => {
                tracing::error!(error = %crate::error_chain(&error), "could not take back the ended task's event");
                return Ok(true);
            }
        };
        drop(client);
        tracing::warn!(
            event_id = taken.event.id,
            rebuilt = taken.rebuilt,
            "the task's message came back after it ended; its event is published again"
        );
        if taken.rebuilt {
            let id = taken.event.id;
            return Ok(self.send_events_out(&[taken.event]).await.contains(&id));
        }
        let stranded = self.publish(vec![taken.event]).await;
        debug_assert!(stranded.is_empty(), "a taken-back event is the outbox's");
        Ok(true)
    }

    /// Answer the owed callbacks of these tasks now (a callback a create attached to a task that
    /// had ended already). What fails is the sweeper's.
    pub(crate) async fn answer_callbacks_of(&self, task_ids: &[Uuid]) {
        let Some(callbacks) = &self.callbacks else { return };
        if task_ids.is_empty() {
            return;
        }
        let answered = async {
            let client = store::client(&self.pool).await?;
            let owed = store::mark_delivered_and_take_owed(&client, &[], task_ids, callbacks::LEASE).await?;
            callbacks::answer_owed(callbacks, &client, owed).await
        };
        if let Err(error) = answered.await {
            tracing::warn!(error = %crate::error_chain(&error), "could not answer callbacks; the sweeper will");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(id: i64, custody: Custody) -> PendingEvent {
        PendingEvent { id, task_id: Uuid::from_u128(id as u128), payload: json!({}), custody }
    }

    #[test]
    fn only_what_a_publish_leaves_undone_is_written() {
        let events = [
            event(1, Custody::Outbox),
            event(2, Custody::Outbox),
            event(3, Custody::HandedOver { owes_callbacks: false }),
            event(4, Custody::HandedOver { owes_callbacks: true }),
            event(5, Custody::HandedOver { owes_callbacks: false }),
        ];
        let after = AfterPublish::of(&events, &[1, 3, 4]);
        assert_eq!(after.to_mark, vec![1], "the outbox's event that went out");
        assert_eq!(after.to_hand_back, vec![5], "the handed-over event that did not");
        assert_eq!(
            after.callback_tasks,
            vec![Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(4)],
            "every outbox event's task, and the handed-over one that owes callbacks"
        );
    }

    #[test]
    fn handed_over_events_that_went_out_and_owe_nothing_cost_no_statement() {
        let events = [
            event(1, Custody::HandedOver { owes_callbacks: false }),
            event(2, Custody::HandedOver { owes_callbacks: false }),
        ];
        assert_eq!(AfterPublish::of(&events, &[1, 2]), AfterPublish::default());
    }
}
