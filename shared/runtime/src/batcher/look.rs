//! Looking at an open batch: submit it (idempotently, on the batch row's id), poll it, and once
//! the provider is done with it settle its results and send what they did not settle on-demand.
//! A batch is given up once its tasks' windows are within the slack of their end: cancelled at
//! the provider, whose partial results are read and kept within [`result_grace`], and its other
//! tasks sent on-demand.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{BatchLine, BatchPhase, ModelProfile, ProviderError};
use aitasks_store::{self as store, BatchOutcome, BatchState, OpenBatch, StoreError};
use uuid::Uuid;

use super::lookup::{look_up, Lookup};
use super::{results, send_now, BatchSummary};
use crate::app::App;

/// A batch taken for a look is hidden from other batchers this long: far longer than a look may
/// take ([`LOOK_LIMIT`]), so two batchers never work on one batch at once (a late write of one
/// could otherwise meet the on-demand attempt of a task the other gave back).
const LOOK_LEASE: Duration = Duration::from_secs(600);
/// The most one look may take, its provider calls and statements together; one stopped there
/// leaves what it wrote (each write fenced) and is taken again after [`RETAKE_AFTER`].
const LOOK_LIMIT: Duration = Duration::from_secs(90);
/// A look stopped at its limit is taken again this soon, not at the end of its lease: longer
/// than any statement of it can still run (the 30 s statement timeout), far shorter than the
/// lease its tasks keep past the give-up time (half the slack, 150 s at the least), so a slow
/// read (a big result file) never leaves its tasks to the stale-running sweep.
const RETAKE_AFTER: Duration = Duration::from_secs(45);
/// No new look starts after this long: the sweep has its other duties too.
const LOOK_WORK: Duration = Duration::from_secs(20);
/// A submit that kept failing this many times gives its tasks to the on-demand path.
const MAX_SUBMIT_TRIES: i32 = 8;

/// Look at the open batches that are due, one at a time, for up to [`LOOK_WORK`].
pub async fn look_at_batches<P>(app: &App<P>, summary: &mut BatchSummary) -> Result<(), StoreError> {
    let client = store::client(&app.pool).await?;
    let started = Instant::now();
    while started.elapsed() < LOOK_WORK {
        let Some(batch) = store::take_due_batches(&client, LOOK_LEASE, 1).await?.pop() else { break };
        let Ok(profile) = app.profiles.resolve(&batch.profile) else {
            let why = "the batch's profile is no longer configured";
            return_all(app, &client, &batch, BatchOutcome::Unsubmitted, Some(why), summary).await?;
            continue;
        };
        let look = async {
            match batch.state {
                BatchState::Submitting => submit(app, &client, profile, &batch, summary).await,
                BatchState::Submitted => poll(app, &client, profile, &batch, summary).await,
            }
        };
        match tokio::time::timeout(LOOK_LIMIT, look).await {
            Ok(looked) => looked?,
            Err(_) => {
                tracing::warn!(batch_id = %batch.id, "a look at a batch ran out of time; it is taken again shortly, keeping what it settled");
                let why = format!("a look ran out of time ({LOOK_LIMIT:?})");
                store::look_at_batch_later(&client, batch.id, RETAKE_AFTER, Some(&why)).await?;
                break;
            }
        }
    }
    Ok(())
}

/// Every task still in the batch goes back to the on-demand path, and the batch ends.
async fn return_all<P>(
    app: &App<P>,
    client: &store::Client,
    batch: &OpenBatch,
    outcome: BatchOutcome,
    why: Option<&str>,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let owed = store::give_back_batch(client, batch.id).await?;
    send_now(app, client, &owed).await?;
    summary.batch_tasks_returned += owed.len() as u64;
    if store::end_batch(client, batch.id, outcome, why).await? {
        summary.batches_failed += 1;
        tracing::warn!(batch_id = %batch.id, profile = %batch.profile, outcome = outcome.as_str(), why, tasks = owed.len(), "a batch ended unanswered; its tasks run on-demand");
    }
    Ok(())
}

/// The tasks still running in the batch, with their requests parsed. A stored request that no
/// longer parses is left out: no line names it, so it goes back on-demand with the unanswered,
/// where the worker ends it as a runtime error.
async fn batch_requests(
    client: &store::Client,
    batch_id: Uuid,
) -> Result<(Vec<store::BatchTask>, HashMap<Uuid, AiRequest>), StoreError> {
    let tasks = store::batch_tasks(client, batch_id).await?;
    let path = Path::root().key("request");
    let requests = tasks
        .iter()
        .filter_map(|task| Some((task.lease.task_id, AiRequest::parse(&task.request, &path).ok()?)))
        .collect();
    Ok((tasks, requests))
}

fn retry_delay(tries: i32) -> Duration {
    Duration::from_secs(1u64 << tries.clamp(0, 8) as u32).min(Duration::from_secs(300))
}

async fn submit<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    batch: &OpenBatch,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    if batch.given_up || batch.tries > MAX_SUBMIT_TRIES {
        return give_up_submitting(app, client, profile, batch, summary).await;
    }
    let (tasks, requests) = batch_requests(client, batch.id).await?;
    if tasks.is_empty() {
        // Every task was canceled before the batch went out: nothing to send.
        store::end_batch(client, batch.id, BatchOutcome::Canceled, None).await?;
        return Ok(());
    }
    // A submit sent before may have made the batch though its answer was lost: never again blind.
    if batch.submits > 0 {
        let why = match look_up(app, client, profile, batch, tasks.len(), summary).await? {
            Ok(Lookup::Nothing) => None,
            Ok(Lookup::Adopt(provider_batch_id)) => {
                let poll = app.settings.runtime.batch_poll;
                if store::mark_batch_submitted(client, batch.id, &provider_batch_id, poll).await? {
                    summary.batches_submitted += 1;
                    tracing::warn!(batch_id = %batch.id, profile = %profile.id, %provider_batch_id, "a submit whose answer was lost made the batch: adopted, not sent again");
                }
                return Ok(());
            }
            Ok(Lookup::Unsure(why)) => Some(why),
            Err(error) => Some(format!("could not look the batch up at the provider: {error}")),
        };
        if let Some(why) = why {
            tracing::warn!(batch_id = %batch.id, profile = %profile.id, why = %why, "not submitting the batch again yet");
            return store::look_at_batch_later(client, batch.id, retry_delay(batch.tries), Some(&why)).await;
        }
    }
    let lines: Vec<BatchLine<'_>> =
        requests.iter().map(|(task_id, request)| BatchLine { task_id: *task_id, request }).collect();
    store::note_submit_sending(client, batch.id).await?;
    match app.batches.submit(profile, batch.id, &lines).await {
        Ok(provider_batch_id) => {
            let poll = app.settings.runtime.batch_poll;
            if store::mark_batch_submitted(client, batch.id, &provider_batch_id, poll).await? {
                summary.batches_submitted += 1;
                tracing::info!(batch_id = %batch.id, profile = %profile.id, %provider_batch_id, records = lines.len(), "submitted a batch");
            }
            Ok(())
        }
        Err(error) if !error.is_retryable() => {
            let why = error.to_string();
            return_all(app, client, batch, BatchOutcome::Unsubmitted, Some(&why), summary).await
        }
        Err(error) => {
            if made_nothing(&error) {
                store::note_submit_refused(client, batch.id).await?;
            }
            tracing::warn!(batch_id = %batch.id, profile = %profile.id, error = %error, "could not submit the batch; trying again later");
            store::look_at_batch_later(client, batch.id, retry_delay(batch.tries), Some(&error.to_string()))
                .await
        }
    }
}

/// Whether a failed submit surely made no batch: the provider answered it with a refusal (rate
/// limited, overloaded). A timeout, a lost connection or another 5xx may have made one.
fn made_nothing(error: &ProviderError) -> bool {
    matches!(error, ProviderError::RateLimited { .. } | ProviderError::Server { status: 503 | 529, .. })
}

/// A `submitting` batch given up (its tasks' windows near their end, or its submits kept
/// failing): the provider may have it all the same (a submit whose answer was lost, a batcher
/// killed before its commit). It is looked up there first ([`look_up`]: OpenAI by its metadata,
/// Bedrock by its job name, Anthropic by what was sent) and, when found, adopted: recorded
/// `submitted` and looked at as such (its results settled if it is done; if not and given up,
/// cancelled there), so nothing is paid for twice. Only a batch the provider does not have goes
/// back whole. Bounded by the look's limit; a lookup that fails (or is unsure) is tried again
/// while there is time.
async fn give_up_submitting<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    batch: &OpenBatch,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let found = match look_up(app, client, profile, batch, 1, summary).await? {
        Ok(Lookup::Unsure(why)) => Err(why),
        Ok(found) => Ok(found),
        Err(error) => Err(error.to_string()),
    };
    match found {
        Ok(Lookup::Adopt(provider_batch_id)) => {
            tracing::warn!(batch_id = %batch.id, %provider_batch_id, "a batch given up while submitting is at the provider; adopted");
            let poll_again = app.settings.runtime.batch_poll;
            if !store::mark_batch_submitted(client, batch.id, &provider_batch_id, poll_again).await? {
                return Ok(());
            }
            let adopted = OpenBatch {
                state: BatchState::Submitted,
                provider_batch_id: Some(provider_batch_id),
                ..batch.clone()
            };
            poll(app, client, profile, &adopted, summary).await
        }
        Ok(_) => {
            let why = "the provider did not take the batch in time";
            return_all(app, client, batch, BatchOutcome::Unsubmitted, Some(why), summary).await
        }
        // Any error while there is time (a refused permission too): giving the tasks back now
        // would run them twice if the provider has the batch.
        Err(error) if !batch.given_up => {
            tracing::warn!(batch_id = %batch.id, error = %error, "could not look the batch up at the provider; trying again later");
            store::look_at_batch_later(client, batch.id, retry_delay(batch.tries), Some(&error)).await
        }
        Err(error) => {
            tracing::warn!(batch_id = %batch.id, error = %error, "could not look the given-up batch up at the provider; its tasks run on-demand");
            let why = "the provider did not take the batch in time";
            return_all(app, client, batch, BatchOutcome::Unsubmitted, Some(why), summary).await
        }
    }
}

async fn poll<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    batch: &OpenBatch,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let Some(provider_batch_id) = batch.provider_batch_id.as_deref() else {
        let why = "a submitted batch without the provider's id";
        return return_all(app, client, batch, BatchOutcome::Failed, Some(why), summary).await;
    };
    let poll_again = app.settings.runtime.batch_poll;
    match app.batches.status(profile, provider_batch_id).await {
        Ok(BatchPhase::Done { results, stopped }) => {
            finish(app, client, profile, batch, &results, stopped.as_deref(), summary).await
        }
        Ok(BatchPhase::Working) | Err(_) if batch.given_up => {
            // Canceled, the provider ends the batch with what it answered (OpenAI `cancelling`
            // then `cancelled`, Anthropic `canceling` then `ended`, Bedrock `Stopping` then
            // `Stopped`): those answers are read and kept while the grace lasts.
            if let Err(error) = app.batches.cancel(profile, provider_batch_id).await {
                tracing::warn!(batch_id = %batch.id, error = %error, "could not cancel the given-up batch at the provider");
            }
            if let Some(again) = within_grace(app, batch) {
                return store::look_at_batch_later(client, batch.id, again, None).await;
            }
            let why = "not answered before its tasks' windows came within the slack of their end";
            return_all(app, client, batch, BatchOutcome::GivenUp, Some(why), summary).await
        }
        Ok(BatchPhase::Working) => store::look_at_batch_later(client, batch.id, poll_again, None).await,
        Err(error) => {
            tracing::warn!(batch_id = %batch.id, error = %error, "could not poll the batch; trying again later");
            store::look_at_batch_later(client, batch.id, poll_again, Some(&error.to_string())).await
        }
    }
}

/// How long after its give-up time a batch's partial results are waited for (the provider
/// finishing its cancel) and read, before what they have not settled runs on-demand: a quarter
/// of the slack (`AITASK_DEFERRED_SLACK_MS`), so the on-demand path keeps three quarters of it
/// and the tasks' leases (half the slack past the give-up time) are not reclaimed meanwhile.
fn result_grace(slack: Duration) -> Duration {
    slack / 4
}

/// When the batch is given up and still within [`result_grace`]: when to look again.
fn within_grace<P>(app: &App<P>, batch: &OpenBatch) -> Option<Duration> {
    let grace = result_grace(app.settings.runtime.deferred_slack);
    let ends = batch.give_up_at + chrono::Duration::from_std(grace).ok()?;
    let left = (ends - chrono::Utc::now()).to_std().ok().filter(|left| !left.is_zero())?;
    Some(app.settings.runtime.batch_poll.min(grace / 4).min(left))
}

/// The provider is done with the batch: settle what its results answer, page by page as they are
/// read, and send the rest on-demand. A read that fails is tried again later while there is time
/// (the batch not given up, or within its grace): what it settled stays settled, and the next
/// read passes those lines by (their tasks have left the batch), so nothing is paid for twice.
async fn finish<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    batch: &OpenBatch,
    results: &[String],
    stopped: Option<&str>,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let (tasks, requests) = batch_requests(client, batch.id).await?;
    if !tasks.is_empty() && !results.is_empty() {
        let mut reader = app.batches.results(profile, results, &requests);
        let mut settlement = results::ResultsSettler::new(&tasks);
        loop {
            match reader.next_page().await {
                Ok(Some(page)) => settlement.settle(app, client, profile, page, summary).await?,
                Ok(None) => break,
                // Any error while there is time (a refused permission too): giving the tasks
                // back now would run them twice if the provider has their answers.
                Err(error) => {
                    let again = if batch.given_up {
                        within_grace(app, batch)
                    } else {
                        Some(app.settings.runtime.batch_poll)
                    };
                    if let Some(again) = again {
                        tracing::warn!(batch_id = %batch.id, error = %error, "could not read the batch's results; trying again later");
                        return store::look_at_batch_later(client, batch.id, again, Some(&error.to_string()))
                            .await;
                    }
                    tracing::warn!(batch_id = %batch.id, error = %error, "the batch's results could not be read; what they did not settle runs on-demand");
                    break;
                }
            }
        }
    }
    let outcome = match stopped {
        None => BatchOutcome::Completed,
        // Stopped because it was given up: its answered lines were kept above.
        Some(_) if batch.given_up => BatchOutcome::GivenUp,
        Some(reason) if reason.contains("expire") => BatchOutcome::Expired,
        Some(reason) if reason.contains("cancel") || reason.contains("stop") => BatchOutcome::Canceled,
        Some(_) => BatchOutcome::Failed,
    };
    let owed = store::give_back_batch(client, batch.id).await?;
    send_now(app, client, &owed).await?;
    summary.batch_tasks_returned += owed.len() as u64;
    if store::end_batch(client, batch.id, outcome, stopped).await? {
        match outcome {
            BatchOutcome::Completed => summary.batches_completed += 1,
            _ => summary.batches_failed += 1,
        }
        tracing::info!(batch_id = %batch.id, profile = %profile.id, outcome = outcome.as_str(), unanswered = owed.len(), "a batch ended");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refused_submit_is_counted_back() {
        let refused = [
            ProviderError::RateLimited { retry_after: None, message: "slow down".into() },
            ProviderError::Server { status: 529, message: "overloaded".into() },
            ProviderError::Server { status: 503, message: "unavailable".into() },
        ];
        assert!(refused.iter().all(made_nothing));
        let unknown = [
            ProviderError::Timeout(Duration::from_secs(30)),
            ProviderError::Connection("reset".into()),
            ProviderError::Server { status: 500, message: "oops".into() },
            ProviderError::Malformed("half a body".into()),
        ];
        assert!(!unknown.iter().any(made_nothing));
    }
}
