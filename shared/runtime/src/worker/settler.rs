//! The batch's group commit: the successes that finish together are completed by one statement
//! with their events (`sql/settle/complete_many.sql`). No timer: the writer takes every success
//! waiting when it looks, and looks again as soon as that returns, so a lone success is written
//! at once. Their events are published by a loop of their own, so an SQS call never holds back
//! the next group's statement.
//!
//! A group is many tasks, of any tenants, in one statement: if that statement fails (one row the
//! store refuses, a deadlock), the group's successes are completed one by one instead, so one
//! row's failure never costs another task its attempt ([`complete_together`], which a provider
//! batch's results settle through too).

use aitasks_store::{self as store, Fenced, Lease, PendingEvent, StoreError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use super::deadline::timed_out;
use crate::app::App;

/// One success waiting for the batch's statement.
struct Pending {
    lease: Lease,
    output: Value,
    usage: Option<Value>,
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
    pub(super) fn start<P>(app: &App<P>) -> (Settler, impl std::future::Future<Output = ()> + '_) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let (written, to_publish) = mpsc::unbounded_channel();
        let work = async move {
            tokio::join!(write_loop(app, receiver, written), publish_loop(app, to_publish));
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
    ) -> Result<Fenced<PendingEvent>, StoreError> {
        let (answer, answered) = oneshot::channel();
        let pending = Pending { lease, output, usage, answer };
        if self.sender.send(pending).is_err() {
            return Err(timed_out("the batch's settlement"));
        }
        answered.await.unwrap_or_else(|_| Err(timed_out("the batch's settlement")))
    }
}

async fn write_loop<P>(
    app: &App<P>,
    mut receiver: mpsc::UnboundedReceiver<Pending>,
    written: mpsc::UnboundedSender<Vec<PendingEvent>>,
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
                events.push(event.clone());
            }
            let _ = pending.answer.send(result);
        }
        let _ = written.send(events);
    }
}

/// Publish what the writer stored, the events of every group written meanwhile together.
async fn publish_loop<P>(app: &App<P>, mut to_publish: mpsc::UnboundedReceiver<Vec<PendingEvent>>) {
    while let Some(mut events) = to_publish.recv().await {
        while let Ok(more) = to_publish.try_recv() {
            events.extend(more);
        }
        app.publish(events).await;
    }
}

/// One statement for the group; if it fails while the store is there, each success alone.
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
    let span = tracing::info_span!("settle batch", attempts = group.len());
    complete_together(&client, &attempts).instrument(span).await
}

/// Complete attempts that finished together, answered item by item in order: the unscoped in
/// one statement, each scoped one in its own (its admission bookkeeping). If the group's
/// statement fails while the store is there (a row it refuses, a deadlock), each is completed
/// alone, so one row's failure never costs another task its attempt; while the store is away,
/// every item is that error. The worker's group commit and a provider batch's results settle
/// through this one path.
pub(crate) async fn complete_together(
    client: &store::Client,
    attempts: &[(Lease, &Value, Option<&Value>)],
) -> Vec<Result<Fenced<PendingEvent>, StoreError>> {
    let unavailable = |error: &StoreError| {
        let text = crate::error_chain(error);
        attempts.iter().map(|_| Err(StoreError::Unavailable(text.clone().into()))).collect()
    };
    let error = match store::complete_many(client, attempts).await {
        Ok(results) => {
            let mut results: Vec<_> = results.into_iter().map(Ok).collect();
            for (slot, (lease, output, usage)) in results.iter_mut().zip(attempts) {
                if lease.scoped {
                    *slot = store::complete_attempt(client, *lease, output, *usage).await;
                }
            }
            return results;
        }
        Err(error) if error.is_unavailable() => return unavailable(&error),
        Err(error) => error,
    };
    if attempts.len() == 1 {
        return vec![Err(error)];
    }
    tracing::warn!(
        attempts = attempts.len(),
        error = %crate::error_chain(&error),
        "the group's statement failed; completing its successes one by one"
    );
    let mut results = Vec::with_capacity(attempts.len());
    for (lease, output, usage) in attempts {
        results.push(store::complete_attempt(client, *lease, output, *usage).await);
    }
    results
}
