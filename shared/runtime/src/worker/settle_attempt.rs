//! Settling an ended attempt through the runtime's one settlement (`crate::settle`): a success
//! through the batch's [`Settler`] (the group commit, which publishes its events), any other
//! decision carried out at once; then what the worker alone adds: a requested cancel ended when
//! a fence fails, and what becomes of the task's SQS message.

use std::time::{Duration, Instant};

use aitasks_store::{self as store, Fenced, StoreError, Task};

use super::parts::PartTimes;
use super::queue_message::Outcome;
use super::settler::Settler;
use crate::app::App;
use crate::settle::{self, Attempt, Carried, Decision, Ending};

pub(super) async fn settle_attempt<P>(
    app: &App<P>,
    task: &Task,
    ending: Ending,
    worked: Duration,
    settler: &Settler,
    parts: &PartTimes,
    hand_over: bool,
) -> Result<Outcome, StoreError> {
    let settling = Instant::now();
    let runtime = &app.settings.runtime;
    let attempt = Attempt::of_task(task);
    let decision = attempt.decide(&ending, runtime);
    let Decision::Complete(completion) = decision else {
        return settle_decision(app, &attempt, &ending, decision, worked, parts, settling).await;
    };
    let usage = settle::stored_usage(completion);
    match settler.complete(attempt.lease, completion.output.clone(), usage, hand_over).await {
        // Announced by the settler, with the others of its group.
        Ok(Fenced::Written(event)) => {
            settle::record(&attempt, &ending, worked, &event, Some(&parts.settled_in(settling.elapsed())));
            Ok(Outcome::Ack)
        }
        // The fence failed: a cancel may be owed, or the task moved on without us.
        Ok(Fenced::Lost) => {
            settle_decision(app, &attempt, &ending, Decision::EndCanceled, worked, parts, settling).await
        }
        Err(error) if error.is_unavailable() => Err(error),
        // The store refused to hold the output (a bug, or a value the checker let through): the
        // attempt ends as a runtime error, decided again from that ending, instead of leaving the
        // task running until the sweeper takes it back.
        Err(error) => {
            tracing::error!(error = %crate::error_chain(&error), "the store refused the attempt's output");
            let unstorable =
                Ending::Unexpected(format!("the output could not be stored: {}", crate::error_chain(&error)));
            let decision = attempt.decide(&unstorable, runtime);
            settle_decision(app, &attempt, &unstorable, decision, worked, parts, settling).await
        }
    }
}

/// Every decision but a success's, and a requested cancel after a fence that failed.
async fn settle_decision<P>(
    app: &App<P>,
    attempt: &Attempt<'_>,
    ending: &Ending,
    decision: Decision<'_>,
    worked: Duration,
    parts: &PartTimes,
    settling: Instant,
) -> Result<Outcome, StoreError> {
    let client = store::client(&app.pool).await?;
    let event = match settle::write_decision(&client, attempt, ending, decision, worked).await? {
        Carried::Ended(event) => Some(event),
        Carried::Requeued { delay } => return Ok(Outcome::Retry { delay }),
        Carried::GivenBack { delay } => return Ok(resend_later(app, attempt, delay).await),
        Carried::Abandoned => return Ok(Outcome::Ack),
        // Parked: its message is deleted (the release sends it again), unless it is the probe of an
        // automatic hold, sent again after the probe's interval.
        Carried::Parked { probe: None } => return Ok(Outcome::Ack),
        Carried::Parked { probe: Some(after) } => return Ok(resend_later(app, attempt, after).await),
        // The fence failed: if a cancel was requested meanwhile, end it; otherwise the task moved
        // on without us (another attempt owns it, or it is gone).
        Carried::Lost => match store::end_canceled(&client, attempt.lease.task_id).await? {
            Fenced::Written(settled) => Some(settled.event),
            Fenced::Lost => None,
        },
    };
    drop(client);
    if let Some(event) = event {
        settle::record(attempt, ending, worked, &event, Some(&parts.settled_in(settling.elapsed())));
        app.publish(vec![event]).await;
    }
    Ok(Outcome::Ack)
}

/// A task given back comes back in a fresh message delayed by `delay`, and this message is
/// acknowledged: a give-back is not a failed receive, so no number of them moves the message to
/// the dead-letter queue. If that send fails, the message itself comes back after the delay.
async fn resend_later<P>(app: &App<P>, attempt: &Attempt<'_>, delay: Duration) -> Outcome {
    let group = crate::queue::message_group(attempt.app_id);
    match app.queues.send_task_after(attempt.lease.task_id, Some(&group), delay).await {
        Ok(()) => Outcome::Ack,
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), "could not send the given-back task's message; its delivery comes back instead");
            Outcome::Retry { delay }
        }
    }
}
