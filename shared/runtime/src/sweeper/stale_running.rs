//! The expiry of running attempts whose holder is gone, by the worker's own rule: the sweeper
//! reads a page of them, decides each ending with [`decision::decide`] (as the worker and the
//! batcher do for theirs: the same budget, the same backoff), writes the page in one statement,
//! and sends each requeued task's message after its backoff.

use std::collections::HashMap;
use std::time::Duration;

use aitasks_store::{
    self as store, Ended, GenericClient, OwedMessage, StaleAttempt, StaleEnding, StoreError,
};
use uuid::Uuid;

use crate::config::RuntimeConfig;
use crate::queue::Queues;
use crate::settle::decision::{self, Decision, Ending};
use crate::settle::jitter;

/// What one page of the expiry did.
#[derive(Debug, Default)]
pub struct ExpiredPage {
    /// Stale attempts the page found (written or not).
    pub found: usize,
    pub requeued: u64,
    /// The tasks that ended (`failed` or `canceled`), with their events to publish.
    pub ended: Vec<Ended>,
    /// Requeued tasks whose message could not be sent: marked unsent, for the owed-message duty.
    pub unsent: u64,
}

/// Expire up to `page` running attempts whose holder is gone (older than
/// `runtime.stale_running`), sending each requeued task's message on `queues`.
pub async fn expire_stale_running(
    client: &impl GenericClient,
    queues: &Queues,
    runtime: &RuntimeConfig,
    page: usize,
) -> Result<ExpiredPage, StoreError> {
    let stale = store::take_stale_running(client, runtime.stale_running, page).await?;
    let mut delays: HashMap<Uuid, Duration> = HashMap::new();
    let decided: Vec<_> = stale
        .iter()
        .filter_map(|attempt| {
            let (ending, delay) = stale_ending(attempt, runtime)?;
            delays.insert(attempt.lease.task_id, delay);
            Some((attempt.lease, ending))
        })
        .collect();
    let written = store::expire_running(client, runtime.stale_running, &decided).await?;
    // Ten to a call, each with its own delay.
    let owed: Vec<OwedMessage> = written
        .requeued
        .iter()
        .map(|task| OwedMessage { task_id: task.id, app_id: task.app_id.clone() })
        .collect();
    let unsent = queues
        .send_tasks_after(&owed, |message| delays.get(&message.task_id).copied().unwrap_or_default())
        .await;
    if !unsent.is_empty() {
        store::mark_unsent(client, &unsent).await?;
    }
    Ok(ExpiredPage {
        found: stale.len(),
        requeued: written.requeued.len() as u64,
        ended: written.settled,
        unsent: unsent.len() as u64,
    })
}

/// What the worker's rule decides for a stale attempt, and a requeue's delay: `None` for a
/// decision the sweeper does not write (none that the rule gives for these endings).
pub fn stale_ending(attempt: &StaleAttempt, runtime: &RuntimeConfig) -> Option<(StaleEnding, Duration)> {
    let ending = if attempt.cancel_requested {
        Ending::CancelRequested
    } else {
        Ending::HolderGone { in_batch: attempt.lease.batch_id.is_some() }
    };
    // The age matters only to endings that made no call (a limit, no time): not these.
    let age = Duration::ZERO;
    let jitter = jitter::random_fraction();
    match decision::decide(&ending, attempt.lease.attempt, attempt.max_attempts, age, runtime, jitter) {
        Decision::Requeue { code, message, delay } => Some((StaleEnding::Requeue { code, message }, delay)),
        Decision::Fail { code, message } => Some((StaleEnding::Fail { code, message }, Duration::ZERO)),
        Decision::EndCanceled => Some((StaleEnding::Canceled, Duration::ZERO)),
        Decision::Complete(_) | Decision::Abandon | Decision::GiveBack { .. } | Decision::Park { .. } => None,
    }
}
