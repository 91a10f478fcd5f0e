//! The invocation's group commit: the successes that finish together are completed together
//! with their events (`crate::settle::complete_together`, which a provider batch's answers are
//! completed through too). No timer: the writer takes every success waiting when it looks, and
//! looks again as soon as that returns, so a lone success is written at once. Their events are
//! published by a loop of their own, so an SQS call never holds back the next group's statement.
//!
//! The events are handed over (`store::Custody::HandedOver`, migrations/V41): written delivered,
//! with nothing but the task's SQS message behind them until they are out. So the settler keeps
//! the tasks whose event is neither out nor handed back ([`Unpublished`]), and the invocation
//! lets their messages come back instead of deleting them (`super::process`).

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use aitasks_store::{self as store, Custody, Fenced, Lease, PendingEvent, StoreError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;
use uuid::Uuid;

use super::deadline::timed_out;
use crate::app::App;
use crate::settle::complete_together;

/// One success waiting for its group's statement.
struct Pending {
    lease: Lease,
    output: Value,
    usage: Option<Value>,
    /// Its delivery may hand its event over (`QueueMessage::hands_over_events`).
    hand_over: bool,
    answer: oneshot::Sender<Result<Fenced<PendingEvent>, StoreError>>,
}

/// Where an attempt hands its success: the settler writes every success that is waiting when it
/// looks, in one statement, and looks again as soon as that returns (group commit: nothing
/// waits for a timer, and a lone success is written at once).
pub(super) struct Settler {
    sender: mpsc::UnboundedSender<Pending>,
}

impl Settler {
    /// The settler, and the loops that write and publish for it (run them beside the attempts;
    /// they end when the settler is dropped and what it was given is written and published).
    /// `unpublished` keeps the tasks whose handed-over event is not out yet.
    pub(super) fn start<'a, P>(
        app: &'a App<P>,
        unpublished: &'a Unpublished,
    ) -> (Settler, impl std::future::Future<Output = ()> + 'a) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let (written, to_publish) = mpsc::unbounded_channel();
        let work = async move {
            tokio::join!(
                write_loop(app, receiver, written, unpublished),
                publish_loop(app, to_publish, unpublished)
            );
        };
        (Settler { sender }, work)
    }

    /// Complete this attempt with the others waiting. [`Fenced::Written`] once it is stored (its
    /// event is published right after, with the group's).
    pub(super) async fn complete(
        &self,
        lease: Lease,
        output: Value,
        usage: Option<Value>,
        hand_over: bool,
    ) -> Result<Fenced<PendingEvent>, StoreError> {
        let (answer, answered) = oneshot::channel();
        let pending = Pending { lease, output, usage, hand_over, answer };
        if self.sender.send(pending).is_err() {
            return Err(timed_out("the group's settlement"));
        }
        answered.await.unwrap_or_else(|_| Err(timed_out("the group's settlement")))
    }
}

/// The tasks of an invocation whose completion event was handed over and is neither out nor
/// handed back to the sweeper: from the commit until its publish is done, or for good when the
/// publish could not hand it back, or never finished before the invocation had to answer.
#[derive(Default)]
pub(super) struct Unpublished(Mutex<HashSet<Uuid>>);

impl Unpublished {
    pub(super) fn contains(&self, task_id: Uuid) -> bool {
        self.tasks().contains(&task_id)
    }

    /// Its event is handed over: nothing but its message stands behind it until its publish.
    pub(super) fn add(&self, task_id: Uuid) {
        self.tasks().insert(task_id);
    }

    /// A publish of these tasks' events is done: all are out or handed back, but the
    /// `stranded`.
    fn published(&self, tasks: &[Uuid], stranded: &[Uuid]) {
        let mut waiting = self.tasks();
        for task_id in tasks.iter().filter(|task_id| !stranded.contains(task_id)) {
            waiting.remove(task_id);
        }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashSet<Uuid>> {
        // A panic elsewhere cannot leave the set half-written: each change is one insert or remove.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn write_loop<P>(
    app: &App<P>,
    mut receiver: mpsc::UnboundedReceiver<Pending>,
    written: mpsc::UnboundedSender<Vec<PendingEvent>>,
    unpublished: &Unpublished,
) {
    while let Some(first) = receiver.recv().await {
        let mut group = vec![first];
        while let Ok(more) = receiver.try_recv() {
            group.push(more);
        }
        let results = write_group(app, &group).await;
        let mut events = Vec::new();
        for (pending, result) in group.into_iter().zip(results) {
            if let Ok(Fenced::Written(event)) = &result {
                if matches!(event.custody, Custody::HandedOver { .. }) {
                    unpublished.add(event.task_id);
                }
                events.push(event.clone());
            }
            let _ = pending.answer.send(result);
        }
        let _ = written.send(events);
    }
}

/// Publish what the writer stored, the events of every group written meanwhile together.
async fn publish_loop<P>(
    app: &App<P>,
    mut to_publish: mpsc::UnboundedReceiver<Vec<PendingEvent>>,
    unpublished: &Unpublished,
) {
    while let Some(mut events) = to_publish.recv().await {
        while let Ok(more) = to_publish.try_recv() {
            events.extend(more);
        }
        let tasks: Vec<Uuid> = events.iter().map(|event| event.task_id).collect();
        let stranded = app.publish(events).await;
        unpublished.published(&tasks, &stranded);
    }
}

/// The group's successes, written together (the store's absence: every one that error).
async fn write_group<P>(app: &App<P>, group: &[Pending]) -> Vec<Result<Fenced<PendingEvent>, StoreError>> {
    let client = match store::client(&app.pool).await {
        Ok(client) => client,
        Err(error) => {
            let text = crate::error_chain(&error);
            return group.iter().map(|_| Err(StoreError::Unavailable(text.clone().into()))).collect();
        }
    };
    let attempts: Vec<(Lease, &Value, Option<&Value>)> =
        group.iter().map(|p| (p.lease, &p.output, p.usage.as_ref())).collect();
    // One statement hands over all its events or none: a group with a message received before
    // keeps the outbox for all (a retried success beside fresh ones is rare, and the outbox is
    // always safe).
    let hand_over = group.iter().all(|pending| pending.hand_over);
    let span = tracing::info_span!("settle group", attempts = group.len());
    complete_together(&client, &attempts, hand_over).instrument(span).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_stays_unpublished_until_its_publish_is_done_and_for_good_when_stranded() {
        let unpublished = Unpublished::default();
        let (out, stranded, in_flight) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        for task_id in [out, stranded, in_flight] {
            unpublished.add(task_id);
        }
        unpublished.published(&[out, stranded], &[stranded]);
        assert!(!unpublished.contains(out), "out, or handed back to the sweeper");
        assert!(unpublished.contains(stranded), "neither: its message must come back");
        assert!(unpublished.contains(in_flight), "a publish the deadline cut off");
    }
}
