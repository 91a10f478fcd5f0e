//! Callbacks: answering the callers that wait for a task without polling (a Step Functions task
//! token, a Lambda durable function's callback id), and heartbeating them while the task lives
//! (docs/lifecycle.md, "Callbacks").
//!
//! A callback becomes owed in the statement that ends its task (the outbox's trigger), so no
//! path that ends a task can miss it. Whoever publishes that transition takes the owed
//! callbacks of its tasks in the same statement that marks the event (`App::publish`) and calls
//! at once; the sweeper takes whatever is left (a publisher that died, a call to retry). Each
//! call is recorded: accepted, the caller gone, refused for good, or owed again after a backoff
//! (1 s doubling to 15 minutes; given up after [`MAX_TRIES`]). QueueMessage is at least once: a
//! sender that dies between its call and its record is replaced after the lease, and its second
//! call finds the caller answered (AWS says gone, which ends it the same).
//!
//! The token is a capability: it goes to AWS and nowhere else (no log line, metric or answer).

mod answer;
mod calls;
mod pace;

use std::time::Duration;

use aitasks_store::{
    self as store, CallbackEnd, DueHeartbeat, GenericClient, OwedCallback, PendingEvent, StoreError,
};
use aws_sdk_sfn::config::retry::RetryConfig;
use aws_sdk_sfn::config::timeout::TimeoutConfig;
use futures::stream::{self, StreamExt};
use serde::Serialize;

use crate::metrics::{Document, Unit};
use calls::{Call, Outcome};

pub(crate) use calls::Clients;
pub(crate) use pace::Pace;

/// Answer calls in flight at once, per page (heartbeats: `AITASK_CALLBACK_CONCURRENCY`).
const CONCURRENT_CALLS: usize = 16;
/// A callback whose calls kept failing is given up after this many (a day and more of backoff).
pub const MAX_TRIES: i32 = 100;
/// An owed callback taken for a call is hidden from other senders this long.
pub const LEASE: Duration = Duration::from_secs(60);
/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// The Step Functions and Lambda clients callbacks are answered with, built once per cold start.
#[derive(Debug, Clone)]
pub struct Callbacks {
    clients: Clients,
    /// For heartbeats: the SDK's own retries off, so the calls AWS sees are exactly the paced
    /// ones (a throttled heartbeat is sent again by the next look, not at once underneath).
    heartbeat_clients: Clients,
}

impl Callbacks {
    /// Clients on the function's configuration (its role, its region, `AWS_ENDPOINT_URL_SFN` /
    /// `AWS_ENDPOINT_URL_LAMBDA`), each call bounded in time so a slow service never holds a
    /// sweep or a worker's publication for long.
    pub fn new(sdk: &aws_config::SdkConfig) -> Callbacks {
        let timeouts = TimeoutConfig::builder()
            .operation_timeout(Duration::from_secs(10))
            .operation_attempt_timeout(Duration::from_secs(4))
            .build();
        let clients = |retries: Option<RetryConfig>| {
            let mut sfn = aws_sdk_sfn::config::Builder::from(sdk).timeout_config(timeouts.clone());
            let mut lambda = aws_sdk_lambda::config::Builder::from(sdk).timeout_config(timeouts.clone());
            if let Some(retries) = retries {
                sfn = sfn.retry_config(retries.clone());
                lambda = lambda.retry_config(retries);
            }
            Clients {
                sfn: aws_sdk_sfn::Client::from_conf(sfn.build()),
                lambda: aws_sdk_lambda::Client::from_conf(lambda.build()),
            }
        };
        Callbacks { clients: clients(None), heartbeat_clients: clients(Some(RetryConfig::disabled())) }
    }
}

/// What answering owed callbacks did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answered {
    pub delivered: u64,
    pub gone: u64,
    pub retried: u64,
    pub refused: u64,
}

impl Answered {
    pub fn calls(&self) -> u64 {
        self.delivered + self.gone + self.retried + self.refused
    }
}

/// Answer these owed callbacks (taken with a lease), at most [`CONCURRENT_CALLS`] calls at once,
/// then record every outcome in one statement.
pub(crate) async fn answer_owed(
    callbacks: &Callbacks,
    client: &impl GenericClient,
    owed: Vec<OwedCallback>,
) -> Result<Answered, StoreError> {
    if owed.is_empty() {
        return Ok(Answered::default());
    }
    let clients = &callbacks.clients;
    let outcomes: Vec<(i64, CallbackEnd)> = stream::iter(owed)
        .map(|callback| async move {
            let answer = answer::answer(callback.task_id, &callback.end);
            let (call, outcome) = calls::answer(clients, &callback.kind, &callback.token, &answer).await;
            record_call(&callback.kind, call, &outcome);
            let end = match outcome {
                Outcome::Accepted => CallbackEnd::Delivered,
                Outcome::Gone(why) => CallbackEnd::Gone(why),
                Outcome::Refused(why) => CallbackEnd::Refused(why),
                Outcome::Retry(why) | Outcome::Throttled(why) if callback.tries >= MAX_TRIES => {
                    CallbackEnd::Refused(format!("given up after {} tries: {why}", callback.tries))
                }
                Outcome::Retry(why) | Outcome::Throttled(why) => {
                    CallbackEnd::Retry { after: backoff(callback.tries), error: why }
                }
            };
            log_end(&callback, call, &end);
            (callback.id, end)
        })
        .buffer_unordered(CONCURRENT_CALLS)
        .collect()
        .await;
    let mut answered = Answered::default();
    for (_, end) in &outcomes {
        match end {
            CallbackEnd::Delivered => answered.delivered += 1,
            CallbackEnd::Gone(_) => answered.gone += 1,
            CallbackEnd::Refused(_) => answered.refused += 1,
            CallbackEnd::Retry { .. } => answered.retried += 1,
        }
    }
    store::record_callbacks(client, &outcomes).await?;
    Ok(answered)
}

/// What heartbeating did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Heartbeats {
    pub(crate) sent: u64,
    pub(crate) gone: u64,
    pub(crate) failed: u64,
    /// Calls AWS throttled: their callbacks are due again at once.
    pub(crate) throttled: u64,
    /// Completion events of the tasks canceled because every caller was gone (to publish).
    pub(crate) canceled: Vec<PendingEvent>,
    /// Time spent in the store recording them.
    pub(crate) db: std::time::Duration,
}

/// How heartbeat calls go out: at most `concurrency` in flight, each waiting for its slot of
/// `pace`.
pub(crate) struct HeartbeatCalls<'a> {
    pub(crate) pace: &'a Pace,
    pub(crate) concurrency: usize,
    /// A queued task whose every caller is gone is canceled.
    pub(crate) cancel_when_gone: bool,
    /// The calls that failed in this sweep, by callback: a failed call (a 5xx, a timeout, a
    /// dropped connection) is sent again within the sweep up to [`TRIES_IN_A_SWEEP`] times, so a
    /// moment's failure does not cost the callback a whole sweep's wait.
    pub(crate) failures: &'a std::sync::Mutex<std::collections::HashMap<i64, u32>>,
}

/// How many times one sweep calls a callback whose heartbeat fails (not throttled: that is
/// AWS's pace, and slows the sweep instead) before leaving it to the next sweep.
pub(crate) const TRIES_IN_A_SWEEP: u32 = 3;

/// Heartbeat the waiting callbacks among `due` (those their task's end made owed are the
/// delivery's); a caller found gone is recorded, and its task canceled when it has not started
/// and nobody else waits for it (`cancel_when_gone`).
pub(crate) async fn heartbeat_due(
    callbacks: &Callbacks,
    client: &impl GenericClient,
    due: Vec<DueHeartbeat>,
    how: &HeartbeatCalls<'_>,
) -> Result<Heartbeats, StoreError> {
    let clients = &callbacks.heartbeat_clients;
    let pace = how.pace;
    let results: Vec<(DueHeartbeat, Outcome)> = stream::iter(due.into_iter().filter(|d| !d.owed))
        .map(|due| async move {
            pace.slot().await;
            let outcome = calls::heartbeat(clients, &due.kind, &due.token).await;
            match outcome {
                Outcome::Accepted => pace.accepted(),
                Outcome::Throttled(_) => pace.throttled(),
                _ => {}
            }
            record_call(&due.kind, Call::Heartbeat, &outcome);
            (due, outcome)
        })
        .buffer_unordered(how.concurrency.max(1))
        .collect()
        .await;
    let cancel_when_gone = how.cancel_when_gone;
    let mut beats = Heartbeats::default();
    let mut ended = Vec::new();
    let mut abandoned = Vec::new();
    // Due again at once: throttled calls, and failed ones with tries left.
    let mut put_back = Vec::new();
    for (due, outcome) in &results {
        match outcome {
            Outcome::Accepted => beats.sent += 1,
            Outcome::Gone(why) => {
                tracing::warn!(task_id = %due.task_id, kind = %due.kind, reason = %why, "a callback's caller is gone; no more calls to it");
                beats.gone += 1;
                if due.task_status == aitasks_contracts::TaskStatus::Queued {
                    abandoned.push(due.task_id);
                }
                ended.push((due.id, CallbackEnd::Gone(why.clone())));
            }
            Outcome::Refused(why) => {
                tracing::error!(task_id = %due.task_id, kind = %due.kind, error = %why, "a callback's heartbeat was refused; no more calls to it");
                beats.failed += 1;
                ended.push((due.id, CallbackEnd::Refused(why.clone())));
            }
            Outcome::Retry(why) => {
                beats.failed += 1;
                let tries = {
                    let mut failures = how.failures.lock().unwrap_or_else(|p| p.into_inner());
                    let tries = failures.entry(due.id).or_insert(0);
                    *tries += 1;
                    *tries
                };
                if tries < TRIES_IN_A_SWEEP {
                    tracing::warn!(task_id = %due.task_id, kind = %due.kind, error = %why, tries, "a callback's heartbeat failed; due again at once");
                    put_back.push(due);
                } else {
                    tracing::warn!(task_id = %due.task_id, kind = %due.kind, error = %why, tries, "a callback's heartbeat failed again; the next sweep sends another");
                }
            }
            // Not a failure of the callback: the account's bucket is empty for now. The pace has
            // slowed; the callback is due again at once, in its place.
            Outcome::Throttled(_) => {
                beats.throttled += 1;
                put_back.push(due);
            }
        }
    }
    let recording = std::time::Instant::now();
    // Put back first: a store error after it costs those callbacks nothing.
    store::unmark_heartbeats(client, &put_back).await?;
    store::record_callbacks(client, &ended).await?;
    if cancel_when_gone && !abandoned.is_empty() {
        beats.canceled = store::cancel_abandoned(client, &abandoned).await?;
        for event in &beats.canceled {
            tracing::info!(task_id = %event.task_id, "canceled before it started: every caller waiting for it is gone");
        }
    }
    beats.db = recording.elapsed();
    Ok(beats)
}

/// The most a failure's cause may hold (Step Functions' limit on `cause`).
const CAUSE_MAX_CHARS: usize = 32_768;

/// Fail a callback at once, outside the outbox (an intake message that never became a task):
/// `Ok` once AWS took it, or will never take it (the caller is gone, the call is refused);
/// `Err` when it is worth trying again (the message is then received again).
pub(crate) async fn fail_now(
    callbacks: &Callbacks,
    callback: &aitasks_contracts::Callback,
    error: &str,
    cause: &str,
) -> Result<(), String> {
    let answer = answer::Answer::Failure {
        error: error.to_owned(),
        cause: cause.chars().take(CAUSE_MAX_CHARS).collect(),
        data: serde_json::json!({"errorCode": error}).to_string(),
    };
    let (call, outcome) = calls::answer(&callbacks.clients, callback.kind(), callback.token(), &answer).await;
    record_call(callback.kind(), call, &outcome);
    match outcome {
        Outcome::Accepted | Outcome::Gone(_) | Outcome::Refused(_) => Ok(()),
        Outcome::Retry(why) | Outcome::Throttled(why) => Err(why),
    }
}

/// The wait before try `tries + 1`: 1 s doubling, at most 15 minutes.
fn backoff(tries: i32) -> Duration {
    let exponent = u32::try_from(tries.saturating_sub(1)).unwrap_or(0).min(10);
    Duration::from_secs(1u64 << exponent).min(MAX_BACKOFF)
}

/// `CallbackCalls` by kind, call and outcome (never the token, never the task).
fn record_call(kind: &str, call: Call, outcome: &Outcome) {
    Document::new(&[&["Kind", "Call", "Outcome"]])
        .dimension("Kind", kind)
        .dimension("Call", call.as_str())
        .dimension("Outcome", outcome.as_str())
        .metric("CallbackCalls", Unit::Count, 1.0)
        .emit();
}

fn log_end(callback: &OwedCallback, call: Call, end: &CallbackEnd) {
    let (task_id, kind, tries, call) =
        (callback.task_id, callback.kind.as_str(), callback.tries, call.as_str());
    match end {
        CallbackEnd::Delivered => tracing::info!(%task_id, kind, call, tries, "callback answered"),
        CallbackEnd::Gone(why) => {
            tracing::warn!(%task_id, kind, call, tries, reason = %why, "a callback's caller is gone; no more calls to it")
        }
        CallbackEnd::Refused(why) => {
            tracing::error!(%task_id, kind, call, tries, error = %why, "a callback's answer was refused; no more calls to it")
        }
        CallbackEnd::Retry { after, error } => tracing::warn!(
            %task_id, kind, call, tries, error = %error, retry_in_ms = after.as_millis() as u64,
            "a callback's answer failed; it is sent again later"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_a_quarter_hour() {
        let waits: Vec<u64> = [1, 2, 3, 5, 10, 11, 50].iter().map(|t| backoff(*t).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 16, 512, 900, 900]);
    }
}
