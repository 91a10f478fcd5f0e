//! The batch's group commit: the successes that finish together are completed by one statement
//! with their events (`sql/settle/complete_many.sql`), and their events published together. No
//! timer: the writer takes every success waiting when it looks, and looks again as soon as that
//! returns, so a lone success is written at once.

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
    /// The settler, and the loop that writes for it (run it beside the attempts; it ends when
    /// the settler is dropped).
    pub(super) fn start<P>(app: &App<P>) -> (Settler, impl std::future::Future<Output = ()> + '_) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Settler { sender }, write_loop(app, receiver))
    }

    /// Complete this attempt with the others waiting. [`Fenced::Written`] once it is stored and
    /// its event published.
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

async fn write_loop<P>(app: &App<P>, mut receiver: mpsc::UnboundedReceiver<Pending>) {
    while let Some(first) = receiver.recv().await {
        let mut group = vec![first];
        while let Ok(more) = receiver.try_recv() {
            group.push(more);
        }
        let written = write_group(app, &group).await;
        let mut events = Vec::new();
        match written {
            Ok(results) => {
                for (pending, result) in group.into_iter().zip(results) {
                    if let Fenced::Written(event) = &result {
                        events.push(event.clone());
                    }
                    let _ = pending.answer.send(Ok(result));
                }
            }
            Err(error) => {
                let text = crate::error_chain(&error);
                for pending in group {
                    let _ = pending.answer.send(Err(StoreError::Unavailable(text.clone().into())));
                }
            }
        }
        // After every attempt has its answer: they log and ack while the events go out.
        app.publish(events).await;
    }
}

async fn write_group<P>(app: &App<P>, group: &[Pending]) -> Result<Vec<Fenced<PendingEvent>>, StoreError> {
    let client = store::client(&app.pool).await?;
    let attempts: Vec<(Lease, &Value, Option<&Value>)> =
        group.iter().map(|p| (p.lease, &p.output, p.usage.as_ref())).collect();
    let span = tracing::info_span!("settle batch", attempts = group.len());
    store::complete_many(&client, &attempts).instrument(span).await
}
