//! The entry of process-task's one path: a whole SQS batch at once. One statement claims every
//! record's task (`sql/lease/claim.sql`), the attempts run side by side (each with its own
//! cancel polls, heartbeats and deadline: [`super::attempt`]), and the successes that finish
//! together are settled together by the [`Settler`]. The round trips of a 10-record batch fall
//! from three a task (claim, complete, mark) to about one for the whole batch on each step
//! (BENCHMARKS.md, "Batches").

use aitasks_providers::Provider;
use aitasks_store::{self as store, Claim, StoreError};
use futures::stream::{self, StreamExt};
use tokio::time::Instant;
use tracing::Instrument;

use super::attempt;
use super::deadline::{timed_out, ANSWER_MARGIN};
use super::delivery::{Delivery, Outcome};
use super::settler::Settler;
use crate::app::App;

/// Work on the tasks of one batch of messages, answering message by message in order. Each
/// attempt's call is stopped `deadline_margin` before `deadline` (when the invocation must have
/// returned) and its task requeued; whatever the database does, the answers come before the
/// deadline. An `Err` means the store could not be reached for that message: retry it.
pub async fn process_batch<P: Provider>(
    app: &App<P>,
    deliveries: &[Delivery<'_>],
    deadline: Instant,
) -> Vec<Result<Outcome, StoreError>> {
    let answer_by = deadline.checked_sub(ANSWER_MARGIN).unwrap_or_else(Instant::now);
    let ids: Vec<uuid::Uuid> = deliveries.iter().map(|delivery| delivery.task_id).collect();
    // Each task's span, and under it a `claim` span for the one statement that claims them all:
    // a claimed task's trace (crate::xray) is recorded before its claim span closes, so its claim
    // is part of it, as for a task claimed alone.
    let spans: Vec<tracing::Span> = ids.iter().map(|id| task_span(*id)).collect();
    let claim_spans: Vec<tracing::Span> =
        spans.iter().map(|span| tracing::info_span!(parent: span, "claim")).collect();
    let claimed = tokio::time::timeout_at(answer_by, async {
        let client = store::client(&app.pool).await?;
        store::claim(&client, &ids).await
    })
    .await
    .unwrap_or_else(|_| Err(timed_out("the database")));
    let claims = match claimed {
        Ok(claims) => claims,
        Err(error) => {
            let text = crate::error_chain(&error);
            tracing::error!(error = %text, "could not claim the batch; its messages will be retried");
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
        for ((claim, span), delivery) in claims.into_iter().zip(spans).zip(deliveries) {
            let handled = after_claim(app, span, claim, delivery.receipt, deadline, &settler);
            work.push(tokio::time::timeout_at(answer_by, handled));
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

/// The span of one task's attempt: its trace (crate::xray) continues the create's once the claim
/// has read the stored header.
fn task_span(task_id: uuid::Uuid) -> tracing::Span {
    tracing::info_span!(
        "task",
        task_id = %task_id,
        attempt = tracing::field::Empty,
        trace_header = tracing::field::Empty
    )
}

async fn after_claim<P: Provider>(
    app: &App<P>,
    span: tracing::Span,
    claim: Claim,
    receipt: &str,
    deadline: Instant,
    settler: &Settler,
) -> Result<Outcome, StoreError> {
    async move {
        match claim {
            Claim::Claimed(task) => attempt::run(app, task, receipt, deadline, settler).await,
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
