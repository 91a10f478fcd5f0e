//! Settling a batch's results, each through the checks and the fences of an on-demand attempt:
//! an answer that passed the checks completes its task (together with the page's others, as a
//! worker's group commit does, through the same path: one row the store refuses is completed
//! alone and costs the others nothing), one that failed them goes to an on-demand repair turn,
//! and a line's error is decided as an attempt's would be (retried on-demand within the attempt
//! budget, or failed). Results come a page at a time ([`ResultsSettler::settle`]), so a result file
//! of any size is settled in bounded memory and a read cut part way keeps what it settled. A task
//! named twice is settled by its first line; a line naming a task no longer in the batch
//! (canceled, taken back, settled by an earlier read) changes nothing, and neither does a late
//! one: every write is fenced on the task's lease, which names the batch that holds it now
//! (`Lease::batch_id`: a task given back has the same attempt number in its next attempt,
//! on-demand or in a newer batch).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use aitasks_providers::{Completion, LineOutcome, LineResult, ModelProfile, ProviderError};
use aitasks_store::{self as store, BatchTask, Fenced, OwedMessage, StoreError};
use serde_json::Value;
use uuid::Uuid;

use super::{send_now, BatchSummary};
use crate::app::App;
use crate::settle::{self, complete_together, Attempt, Carried, Ending};

/// The settling of one batch's results, page after page.
pub(super) struct ResultsSettler<'t> {
    in_batch: HashMap<Uuid, &'t BatchTask>,
    /// Tasks a line named already: a later line for them is a duplicate.
    seen: HashSet<Uuid>,
}

impl<'t> ResultsSettler<'t> {
    pub(super) fn new(tasks: &'t [BatchTask]) -> ResultsSettler<'t> {
        let in_batch = tasks.iter().map(|task| (task.lease.task_id, task)).collect();
        ResultsSettler { in_batch, seen: HashSet::with_capacity(tasks.len()) }
    }

    /// Settle one page of result lines. An error is the store's absence only: a row it refuses
    /// leaves that task in the batch (it goes back on-demand with the unanswered).
    pub(super) async fn settle<P>(
        &mut self,
        app: &App<P>,
        client: &store::Client,
        profile: &ModelProfile,
        lines: Vec<LineResult>,
        summary: &mut BatchSummary,
    ) -> Result<(), StoreError> {
        let mut answered: Vec<(Attempt, Ending)> = Vec::new();
        let mut others: Vec<(&BatchTask, LineOutcome)> = Vec::new();
        for line in lines {
            // A duplicate line: the first one named is the task's answer.
            if !self.seen.insert(line.task_id) {
                continue;
            }
            let Some(task) = self.in_batch.get(&line.task_id).copied() else { continue };
            match line.outcome {
                LineOutcome::Answered(completion) => answered
                    .push((Attempt::of_batch_task(task, &profile.id), Ending::Finished(Ok(completion)))),
                // Left running in the batch: it goes back on-demand, uncounted, with the unanswered.
                LineOutcome::Unanswered(_) => {}
                outcome => others.push((task, outcome)),
            }
        }
        // The answers first: one line's trouble below never holds back the others' results.
        complete_answers(app, client, &answered, summary).await?;
        let mut repairs: Vec<OwedMessage> = Vec::new();
        for (task, outcome) in others {
            let settled = match outcome {
                LineOutcome::Invalid(resume) => match keepable(&resume) {
                    Ok(resume) => {
                        store::give_back_for_repair(client, task.lease, &resume).await.map(|owed| {
                            summary.batch_repairs += u64::from(owed.is_some());
                            repairs.extend(owed);
                        })
                    }
                    Err(why) => {
                        let error = ProviderError::LoopFailed(why);
                        line_failed(app, client, profile, task, error, summary).await
                    }
                },
                LineOutcome::Failed(error) => line_failed(app, client, profile, task, error, summary).await,
                LineOutcome::Answered(_) | LineOutcome::Unanswered(_) => Ok(()),
            };
            refused_alone(task.lease.task_id, settled)?;
        }
        send_now(app, client, &repairs).await
    }
}

/// A line's write: the store's absence stops the look; any other error (a value the store
/// cannot hold, a constraint, a deadlock) is this line's alone: its task stays in the batch
/// and goes back on-demand with the unanswered, and the other lines carry on.
fn refused_alone<T>(task_id: Uuid, settled: Result<T, StoreError>) -> Result<(), StoreError> {
    match settled {
        Ok(_) => Ok(()),
        Err(error) if error.is_unavailable() => Err(error),
        Err(error) => {
            tracing::warn!(task_id = %task_id, error = %crate::error_chain(&error), "a batch line could not be settled; its task runs on-demand");
            Ok(())
        }
    }
}

/// The repair turn of an invalid answer, as the store keeps it, or why it cannot be kept: the
/// answer is the model's, so it may hold what Postgres cannot store (a NUL: kept as U+FFFD, so
/// the answer still gets its repair turn as an on-demand one does, the problems naming the NUL)
/// or be too long to keep (the task's answer then fails as on-demand would,
/// `WORKFLOW_AI_LOOP_FAILED`, retried within its budget).
fn keepable(resume: &aitasks_providers::Resume) -> Result<Value, String> {
    /// Under the table's check (migrations/V20), with room for the JSON's own escaping.
    const MAX_KEPT_BYTES: usize = 1_000_000;
    let mut kept =
        serde_json::to_value(resume).map_err(|e| format!("the repair turn could not be kept: {e}"))?;
    super::nul::replace_nul(&mut kept);
    let bytes = serde_json::to_string(&kept).map_or(usize::MAX, |text| text.len());
    if bytes > MAX_KEPT_BYTES {
        return Err(format!("the invalid answer is too long to repair ({bytes} bytes)"));
    }
    Ok(kept)
}

/// Complete a page of answered tasks together ([`complete_together`]); their settlements
/// recorded, their endings published.
async fn complete_answers<P>(
    app: &App<P>,
    client: &store::Client,
    answered: &[(Attempt<'_>, Ending)],
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let answers: Vec<(&Attempt, &Ending, &Completion)> = answered
        .iter()
        .filter_map(|(attempt, ending)| Some((attempt, ending, ending.completion()?)))
        .collect();
    if answers.is_empty() {
        return Ok(());
    }
    let usages: Vec<Option<Value>> =
        answers.iter().map(|(_, _, completion)| settle::stored_usage(completion)).collect();
    // Every lease names the batch: a result of a batch the task has left changes nothing.
    let successes: Vec<settle::Success> = answers
        .iter()
        .zip(&usages)
        .map(|((attempt, _, completion), usage)| (attempt.lease, &completion.output, usage.as_ref()))
        .collect();
    // The batcher holds no SQS message of these tasks: their events are the outbox's.
    let written = complete_together(client, &successes, false).await;
    let mut events = Vec::new();
    for ((attempt, ending, _), written) in answers.into_iter().zip(written) {
        match written {
            Ok(Fenced::Written(event)) => {
                summary.batch_results_settled += 1;
                settle::record(attempt, ending, Duration::ZERO, &event, None);
                events.push(event);
            }
            Ok(Fenced::Lost) => {}
            written => refused_alone(attempt.lease.task_id, written)?,
        }
    }
    app.publish(events).await;
    Ok(())
}

/// A line's error, decided as an on-demand attempt's: retried on-demand within the attempt
/// budget (the task leaves its batch, its message sent after the backoff), or the task fails.
async fn line_failed<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    task: &BatchTask,
    error: ProviderError,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let attempt = Attempt::of_batch_task(task, &profile.id);
    let ending = Ending::Finished(Err(error));
    let decision = attempt.decide(&ending, &app.settings.runtime);
    match settle::write_decision(client, &attempt, &ending, decision, Duration::ZERO).await? {
        Carried::Requeued { delay } => {
            summary.batch_tasks_returned += 1;
            let group = crate::queue::message_group(&task.app_id);
            let task_id = attempt.lease.task_id;
            if let Err(error) = app.queues.send_task_after(task_id, Some(&group), delay).await {
                tracing::warn!(error = %crate::error_chain(&error), "could not send a retried batch task's message; the sweeper will");
                store::mark_unsent(client, &[task_id]).await?;
            }
        }
        Carried::Ended(event) => {
            summary.batch_results_settled += 1;
            settle::record(&attempt, &ending, Duration::ZERO, &event, None);
            app.publish(vec![event]).await;
        }
        // A failed fence: the task left the batch, or its cancel was requested (the sweeper
        // ends that). An error line decides nothing else.
        Carried::Lost | Carried::GivenBack { .. } | Carried::Parked { .. } | Carried::Abandoned => {}
    }
    Ok(())
}
