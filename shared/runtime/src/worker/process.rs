//! The entry of process-task's one path: a whole invocation's messages at once. One statement claims every
//! record's task (`sql/lease/claim_by.sql`), the attempts run side by side (each with its own
//! cancel polls, heartbeats and deadline: [`super::attempt`]), and the successes that finish
//! together are settled together by the [`Settler`]. The round trips of a 10-message invocation fall
//! from three a task (claim, complete, mark) to about one for the whole invocation on each step
//! (docs/benchmarks/2026-12-01-issue-20-batches.md).

use aitasks_providers::Provider;
use std::time::Duration;

use aitasks_store::{self as store, Claim, ClaimMark, StoreError, TaskStatus};
use tokio::time::Instant;
use tracing::Instrument;

use super::attempt;
use super::deadline::{timed_out, ANSWER_MARGIN, CLAIM_MARGIN};
use super::parts::PartTimes;
use super::queue_message::{Outcome, QueueMessage};
use super::settler::{Settler, Unpublished};
use crate::app::App;

/// Work on the tasks of one invocation's messages, answering message by message in order. Each
/// attempt's call is stopped `deadline_margin` before `deadline` (when the invocation must have
/// returned) and its task requeued; whatever the database does, the answers come before the
/// deadline. An `Err` means the store could not be reached for that message: retry it.
///
/// The records are claimed a wave at a time, as many as run at once
/// (`AITASK_RECORD_CONCURRENCY`, a whole invocation of 10 messages by default): a claimed task always
/// starts at once, never waits claimed and unwatched behind the others, and a wave that would
/// start too late to do anything is not claimed at all.
pub async fn process_records<P: Provider>(
    app: &App<P>,
    messages: &[QueueMessage<'_>],
    deadline: Instant,
) -> Vec<Result<Outcome, StoreError>> {
    let answer_by = deadline.checked_sub(ANSWER_MARGIN).unwrap_or_else(Instant::now);
    let wave = app.settings.runtime.record_concurrency.max(1);
    let unpublished = Unpublished::default();
    let (settler, writing) = Settler::start(app, &unpublished);
    let work = async {
        let settler = settler;
        let mut outcomes = Vec::with_capacity(messages.len());
        for records in messages.chunks(wave) {
            outcomes.extend(run_wave(app, records, deadline, answer_by, &settler).await);
        }
        drop(settler);
        outcomes
    };
    // The writer stops with the attempts, or at the deadline at the latest.
    let (outcomes, _) = tokio::join!(work, tokio::time::timeout_at(answer_by, writing));
    keep_messages_of_unpublished(outcomes, messages, &unpublished)
}

/// A completed task whose handed-over event is not out has only its message behind it: the
/// message comes back at once instead of being deleted, and brings the event with it
/// (`Claim::NotClaimable` in [`after_claim`]).
fn keep_messages_of_unpublished(
    outcomes: Vec<Result<Outcome, StoreError>>,
    messages: &[QueueMessage<'_>],
    unpublished: &Unpublished,
) -> Vec<Result<Outcome, StoreError>> {
    outcomes
        .into_iter()
        .zip(messages)
        .map(|(outcome, message)| match outcome {
            Ok(Outcome::Ack) if unpublished.contains(message.task_id) => {
                tracing::warn!(task_id = %message.task_id, "the task's event is not out; its message comes back for it");
                Ok(Outcome::Retry { delay: Duration::ZERO })
            }
            other => other,
        })
        .collect()
}

/// One wave: one statement claims its records' tasks, and their attempts run side by side.
async fn run_wave<P: Provider>(
    app: &App<P>,
    records: &[QueueMessage<'_>],
    deadline: Instant,
    answer_by: Instant,
    settler: &Settler,
) -> Vec<Result<Outcome, StoreError>> {
    // Too late to work on anything: claim nothing, and send each record's message again (a
    // record left to come back would be a failed receive, and enough of them would move a task
    // that keeps landing in a late wave to the dead-letter queue untried).
    if Instant::now() + app.settings.runtime.deadline_margin >= deadline {
        let resends = records.iter().map(|message| resend_unclaimed(app, message, Duration::ZERO));
        return tokio::time::timeout_at(answer_by, futures::future::join_all(resends)).await.unwrap_or_else(
            |_| records.iter().map(|_| Ok(Outcome::Retry { delay: Duration::ZERO })).collect(),
        );
    }
    let ids: Vec<uuid::Uuid> = records.iter().map(|message| message.task_id).collect();
    // Each task's span, and under it a `claim` span for the one statement that claims them all:
    // a claimed task's trace (crate::xray) is recorded before its claim span closes, so its claim
    // is part of it, as for a task claimed alone.
    let spans: Vec<tracing::Span> = ids.iter().map(|id| task_span(*id)).collect();
    let claim_spans: Vec<tracing::Span> =
        spans.iter().map(|span| tracing::info_span!(parent: span, "claim")).collect();
    let claiming = Instant::now();
    let claims = match claim(app, &ids, answer_by).await {
        Ok(claims) => claims,
        Err(error) => {
            let text = crate::error_chain(&error);
            tracing::error!(error = %text, "could not claim the wave's tasks; its messages will be retried");
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
    // Built first, so the futures hold no closure (a closure over references would make the
    // whole future lose `Send` where the dev server spawns it).
    let mut work = Vec::with_capacity(claims.len());
    let claimed_in = claiming.elapsed();
    for ((claim, span), message) in claims.into_iter().zip(spans).zip(records) {
        let handled = after_claim(app, span, claim, message, deadline, settler, claimed_in);
        work.push(tokio::time::timeout_at(answer_by, handled));
    }
    futures::future::join_all(work)
        .await
        .into_iter()
        .map(|outcome| outcome.unwrap_or_else(|_| Err(timed_out("the database"))))
        .collect()
}

/// A message this invocation did not claim, sent again: acknowledged once that is sent.
async fn resend_unclaimed<P>(
    app: &App<P>,
    message: &QueueMessage<'_>,
    delay: Duration,
) -> Result<Outcome, StoreError> {
    match app.queues.send_task_after(message.task_id, message.group, delay).await {
        Ok(()) => Ok(Outcome::Ack),
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), "could not send the unclaimed task's message again; the received one comes back instead");
            Ok(Outcome::Retry { delay })
        }
    }
}

/// How soon a record whose task was busy comes back.
const BUSY_RETRY: Duration = Duration::from_secs(1);

/// How soon the message of an ended task comes back when the event it brought could not be
/// published and nothing else stands behind it.
const REPUBLISH_RETRY: Duration = Duration::from_secs(60);

/// How long the duplicate message of a running task stays away: Lambda's longest timeout, so
/// the attempt running it has ended (or its worker is gone and the sweeper took it back) when
/// it comes back. A few such returns at most, far below the queue's `maxReceiveCount`.
const RUNNING_DUPLICATE_RETRY: Duration = Duration::from_secs(900);

/// Claim the tasks, waiting for the answer until [`CLAIM_MARGIN`] before `answer_by`. A claim
/// whose answer does not come by then takes nothing after that moment, and what it took before
/// is given back uncounted: its tasks are not left running for nobody, an attempt spent.
async fn claim<P>(app: &App<P>, ids: &[uuid::Uuid], answer_by: Instant) -> Result<Vec<Claim>, StoreError> {
    let claim_by = answer_by.checked_sub(CLAIM_MARGIN).unwrap_or_else(Instant::now);
    let left = claim_by.saturating_duration_since(Instant::now());
    let mark = ClaimMark {
        token: uuid::Uuid::new_v4(),
        by: chrono::Utc::now() + chrono::TimeDelta::from_std(left).unwrap_or_default(),
    };
    let claimed = tokio::time::timeout_at(claim_by, async {
        let client = store::client(&app.pool).await?;
        store::claim_by(&client, ids, &mark).await
    })
    .await;
    match claimed {
        Ok(result) => result,
        Err(_) => {
            let given_back = tokio::time::timeout_at(answer_by, async {
                let client = store::client(&app.pool).await?;
                store::give_back_claims(&client, ids, mark.token).await
            })
            .await
            .unwrap_or_else(|_| Err(timed_out("the give-back of a late claim")));
            match given_back {
                Ok(n) => tracing::warn!(
                    given_back = n,
                    "the claim did not answer in time; what it took is given back uncounted"
                ),
                Err(error) => {
                    tracing::error!(error = %crate::error_chain(&error), "the claim did not answer in time and what it took could not be given back; the sweeper will")
                }
            }
            Err(timed_out("the claim"))
        }
    }
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
    message: &QueueMessage<'_>,
    deadline: Instant,
    settler: &Settler,
    claimed_in: Duration,
) -> Result<Outcome, StoreError> {
    async move {
        match claim {
            Claim::Claimed(task) => {
                let parts = PartTimes::new(claimed_in);
                attempt::run(app, task, message, deadline, settler, &parts).await
            }
            Claim::Canceled(settled) => {
                app.publish(vec![settled.event]).await;
                Ok(Outcome::Ack)
            }
            // The message came back after its task ended: the worker that completed it may have
            // died before the event it handed over was out.
            Claim::NotClaimable(status) if status.is_terminal() => {
                tracing::info!(status = status.as_str(), "duplicate message of an ended task");
                if app.publish_again(message.task_id).await? {
                    Ok(Outcome::Ack)
                } else {
                    Ok(Outcome::Retry { delay: REPUBLISH_RETRY })
                }
            }
            // A redelivery while another delivery runs the task: that worker's visibility ran
            // out, and deleting this copy would delete the message it counts on. If it handed its
            // event over and dies before its publish, this copy is all that stands behind the
            // event, so it comes back once any attempt must have ended. (A duplicate inside one
            // invocation is answered with its twin.)
            Claim::NotClaimable(status)
                if status == TaskStatus::Running && message.receives.is_some_and(|n| n > 1) =>
            {
                tracing::info!("duplicate message of a running task; it comes back after the attempt");
                Ok(Outcome::Retry { delay: RUNNING_DUPLICATE_RETRY })
            }
            Claim::NotClaimable(status) => {
                tracing::info!(status = status.as_str(), "duplicate message; nothing to do");
                Ok(Outcome::Ack)
            }
            Claim::Missing => {
                tracing::info!("no such task (deleted); nothing to do");
                Ok(Outcome::Ack)
            }
            Claim::Busy => {
                tracing::info!("the task's row was busy; its message comes back in a moment");
                resend_unclaimed(app, message, BUSY_RETRY).await
            }
        }
    }
    .instrument(span)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(task_id: uuid::Uuid) -> QueueMessage<'static> {
        QueueMessage { task_id, receipt: "r", group: None, receives: Some(1) }
    }

    #[test]
    fn only_an_acknowledged_message_whose_event_is_not_out_comes_back() {
        let ids = [uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2), uuid::Uuid::from_u128(3)];
        let messages: Vec<QueueMessage> = ids.iter().map(|id| message(*id)).collect();
        let unpublished = Unpublished::default();
        unpublished.add(ids[0]);
        unpublished.add(ids[2]);
        let later = Outcome::Retry { delay: Duration::from_secs(5) };
        let outcomes = vec![Ok(Outcome::Ack), Ok(Outcome::Ack), Ok(later)];
        let kept: Vec<Outcome> = keep_messages_of_unpublished(outcomes, &messages, &unpublished)
            .into_iter()
            .map(|outcome| outcome.expect("no store error"))
            .collect();
        assert_eq!(kept, [Outcome::Retry { delay: Duration::ZERO }, Outcome::Ack, later]);
    }
}
