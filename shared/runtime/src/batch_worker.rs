//! A whole SQS batch at once: one statement claims every record's task, the attempts run side by
//! side as always (each with its own cancel polls, heartbeats and deadline), and the successes
//! that finish together are settled together by the [`Settler`]: one statement completes them
//! and writes their events, and one `SendMessageBatch` and one mark publish those events. The
//! round trips of a 10-record batch fall from three a task (claim, complete, mark) to about one
//! for the whole batch on each step (BENCHMARKS.md, "Batches").

use aitasks_providers::Provider;
use aitasks_store::{self as store, Claim, Fenced, Lease, PendingEvent, StoreError};
use futures::stream::{self, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::Instrument;
use uuid::Uuid;

use crate::app::App;
use crate::worker::{run_claimed, task_span, timed_out, MessageLease, Outcome, ANSWER_MARGIN};

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
pub struct Settler {
    sender: mpsc::UnboundedSender<Pending>,
}

impl Settler {
    /// The settler, and the loop that writes for it (run it beside the attempts; it ends when
    /// the settler is dropped).
    fn start<P>(app: &App<P>) -> (Settler, impl std::future::Future<Output = ()> + '_) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Settler { sender }, write_loop(app, receiver))
    }

    /// Complete this attempt with the others waiting. [`Fenced::Written`] once it is stored and
    /// its event published.
    pub(crate) async fn complete(
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

/// Work on the tasks of one batch of messages, answering message by message in order. Each
/// attempt's call is stopped `deadline_margin` before `deadline` (when the invocation must have
/// returned) and its task requeued; whatever the database does, the answers come before the
/// deadline. An `Err` means the store could not be reached for that message: retry it.
pub async fn process_batch<P: Provider>(
    app: &App<P>,
    messages: &[(Uuid, Option<MessageLease<'_>>)],
    deadline: Instant,
) -> Vec<Result<Outcome, StoreError>> {
    let answer_by = deadline.checked_sub(ANSWER_MARGIN).unwrap_or_else(Instant::now);
    let ids: Vec<Uuid> = messages.iter().map(|(id, _)| *id).collect();
    // Each task's span, and under it a `claim` span for the one statement that claims them all:
    // a claimed task's trace (crate::xray) is recorded before its claim span closes, so its claim
    // is part of it, as for a task claimed alone.
    let spans: Vec<tracing::Span> = ids.iter().map(|id| task_span(*id)).collect();
    let claim_spans: Vec<tracing::Span> =
        spans.iter().map(|span| tracing::info_span!(parent: span, "claim")).collect();
    let claimed = tokio::time::timeout_at(answer_by, async {
        let client = store::client(&app.pool).await?;
        store::claim_many(&client, &ids).await
    })
    .await
    .unwrap_or_else(|_| Err(timed_out("the database")));
    let claims = match claimed {
        Ok(claims) => claims,
        Err(error) => {
            tracing::error!(error = %crate::error_chain(&error), "could not claim the batch; its messages will be retried");
            let text = crate::error_chain(&error);
            return ids.iter().map(|_| Err(StoreError::Unavailable(text.clone().into()))).collect();
        }
    };
    for ((claim, span), claim_span) in claims.iter().zip(&spans).zip(claim_spans) {
        if let Claim::Claimed(task) = claim {
            if let Some(header) = &task.trace_header {
                span.record("trace_header", header.as_str());
            }
        }
        drop(claim_span);
    }
    let (settler, writing) = Settler::start(app);
    let attempts = async {
        let settler = settler;
        // Built first, so the stream holds futures and no closure (a closure over references
        // would make the whole future lose `Send` where the dev server spawns it).
        let mut work = Vec::with_capacity(claims.len());
        for ((claim, span), (_, message)) in claims.into_iter().zip(spans).zip(messages) {
            let attempt = after_claim(app, span, claim, message.as_ref(), deadline, &settler);
            work.push(tokio::time::timeout_at(answer_by, attempt));
        }
        let outcomes: Vec<Result<Outcome, StoreError>> = stream::iter(work)
            .buffered(app.settings.runtime.batch_concurrency.max(1))
            .map(|outcome| outcome.unwrap_or_else(|_| Err(timed_out("the database"))))
            .collect()
            .await;
        drop(settler);
        outcomes
    };
    // The writer stops with the attempts, or at the deadline at the latest.
    let (outcomes, _) = tokio::join!(attempts, tokio::time::timeout_at(answer_by, writing));
    outcomes
}

async fn after_claim<P: Provider>(
    app: &App<P>,
    span: tracing::Span,
    claim: Claim,
    message: Option<&MessageLease<'_>>,
    deadline: Instant,
    settler: &Settler,
) -> Result<Outcome, StoreError> {
    async move {
        match claim {
            Claim::Claimed(task) => run_claimed(app, task, message, deadline, Some(settler)).await,
            Claim::Canceled(settled) => {
                app.publish(vec![settled.event]).await;
                Ok(Outcome::Ack)
            }
            Claim::NotClaimable(status) => {
                tracing::info!(status = status.as_str(), "duplicate delivery; nothing to do");
                Ok(Outcome::Ack)
            }
            Claim::Missing => {
                tracing::info!("no such task (deleted); nothing to do");
                Ok(Outcome::Ack)
            }
        }
    }
    .instrument(span)
    .await
}
