//! What an attempt's ending writes, on-demand or in a provider batch: a pure function of how the
//! attempt ended, its attempt number and budget, and the retry policy. [`super::write_decision`]
//! writes the decision (a success: [`super::complete_together`]).

use std::time::Duration;

use aitasks_contracts::ErrorCode;
use aitasks_providers::{Completion, ProviderError};

use crate::config::RuntimeConfig;

/// How an attempt's provider call ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The call returned (an output, or an error).
    Finished(Result<Completion, ProviderError>),
    /// A cancel was requested while the call ran; the call was aborted.
    CancelRequested,
    /// The lease is gone (requeued by the sweeper, settled or deleted elsewhere).
    LeaseLost,
    /// The invocation was about to reach its deadline; the call was stopped.
    Deadline,
    /// Something that should not happen did (a panic, a stored request that no longer parses).
    /// The detail is for the log; the task stores [`UNEXPECTED_MESSAGE`].
    Unexpected(String),
    /// The attempt was claimed too late to make any call before the deadline's stop: nothing was
    /// spent, and the task goes back unworked, its attempt uncounted.
    NoTime,
    /// Every profile the attempt could use was at its provider-side limit: no call was made.
    /// The task goes back unworked, its attempt uncounted, for another try after the delay.
    Throttled(Duration),
    /// The sweeper found the attempt's holder gone: an on-demand worker that stopped sending
    /// heartbeats (`in_batch` false), or a provider batch whose lease passed without the batcher
    /// giving the task back. A counted attempt that ended without an answer, as a deadline's.
    HolderGone { in_batch: bool },
    /// The task is held (docs/api.md, "Holds"): its scope, or every profile of its chain, by these
    /// holds, found at its claim or placed by its own call's failure. It is parked, its attempt
    /// uncounted, until one of them is released.
    Held(Vec<uuid::Uuid>),
}

impl Ending {
    /// The answer, when the call returned one.
    pub(crate) fn completion(&self) -> Option<&Completion> {
        match self {
            Ending::Finished(Ok(completion)) => Some(completion),
            _ => None,
        }
    }
}

/// The message stored when a deadline stops an attempt (with [`ErrorCode::Interrupted`]).
const DEADLINE_MESSAGE: &str = "The invocation was about to reach its deadline.";

/// The messages stored when the sweeper finds an attempt's holder gone (with
/// [`ErrorCode::Interrupted`]).
const HEARTBEATS_STOPPED_MESSAGE: &str = "The worker stopped sending heartbeats.";
const BATCH_LEASE_PASSED_MESSAGE: &str = "The provider batch did not answer for the task in time.";

/// The message stored with [`ErrorCode::RuntimeError`]: the detail may hold internals.
pub(crate) const UNEXPECTED_MESSAGE: &str = "The worker failed unexpectedly.";

/// What to write for the attempt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision<'a> {
    /// Store the output: the task ends `succeeded`.
    Complete(&'a Completion),
    /// Put the task back in the queue, its message visible again after `delay`.
    Requeue { code: ErrorCode, message: String, delay: Duration },
    /// End the task `failed`.
    Fail { code: ErrorCode, message: String },
    /// End the task `canceled` (its cancel was requested).
    EndCanceled,
    /// Write nothing: another worker or the sweeper owns the task now.
    Abandon,
    /// Give the task back unworked (attempt uncounted); it comes back after `delay`.
    GiveBack { delay: Duration },
    /// Park the held task under `holds` (attempt uncounted, no message, no queue timeout while
    /// held); a task that takes an automatic hold's probe lease comes back after `probe`.
    Park { holds: &'a [uuid::Uuid], probe: Duration },
}

/// The message stored when a task given back at provider limits reaches the queue timeout.
const LIMITED_MESSAGE: &str = "The task waited for its provider's limits longer than the queue timeout.";

/// The message of a task that kept being stopped before its first call, past its queue timeout.
const UNWORKED_MESSAGE: &str = "The task could not be worked on within the queue timeout.";

/// A task's age as the queue timeout reads it: its time since creation, or for a deferred task
/// (`deferred_by`, its window's end) the time that brings it to the timeout exactly when its
/// window ends, so a deferred task given back unworked ends at its own deadline, not 15
/// minutes after a creation up to a day ago.
pub(crate) fn timeout_age(
    created_at: chrono::DateTime<chrono::Utc>,
    deferred_by: Option<chrono::DateTime<chrono::Utc>>,
    config: &RuntimeConfig,
) -> Duration {
    let now = chrono::Utc::now();
    match deferred_by {
        Some(by) => config.queue_timeout.saturating_sub((by - now).to_std().unwrap_or_default()),
        None => (now - created_at).to_std().unwrap_or_default(),
    }
}

/// Decide what an ended attempt writes. `attempt` is the attempt just made (1-based) and
/// `max_attempts` the task's budget; `age` is the task's time since its creation. `jitter` (0 to
/// 1, random: [`super::jitter`]) picks the retry's delay between zero and the backoff's cap
/// ("full jitter"), so tasks that failed together (one 429 for many) do not come back together.
pub(crate) fn decide<'a>(
    ending: &'a Ending,
    attempt: i32,
    max_attempts: i32,
    age: Duration,
    config: &RuntimeConfig,
    jitter: f64,
) -> Decision<'a> {
    let attempts_left = attempt < max_attempts;
    let backoff = config.backoff_cap(attempt).mul_f64(jitter.clamp(0.0, 1.0));
    match ending {
        Ending::Finished(Ok(completion)) => Decision::Complete(completion),
        Ending::Finished(Err(error)) if error.is_retryable() && attempts_left => Decision::Requeue {
            code: error.code(),
            message: error.public_message(),
            // The provider's Retry-After wins when it asks for longer than the backoff.
            delay: backoff.max(error.retry_after().unwrap_or_default()),
        },
        Ending::Finished(Err(error)) => {
            Decision::Fail { code: error.code(), message: error.public_message() }
        }
        // Retryable, as the reference has it: a panic may not repeat on another instance.
        Ending::Unexpected(_) if attempts_left => Decision::Requeue {
            code: ErrorCode::RuntimeError,
            message: UNEXPECTED_MESSAGE.to_owned(),
            delay: backoff,
        },
        Ending::Unexpected(_) => {
            Decision::Fail { code: ErrorCode::RuntimeError, message: UNEXPECTED_MESSAGE.to_owned() }
        }
        Ending::Deadline if attempts_left => Decision::Requeue {
            code: ErrorCode::Interrupted,
            message: DEADLINE_MESSAGE.to_owned(),
            delay: Duration::ZERO,
        },
        Ending::Deadline => {
            Decision::Fail { code: ErrorCode::Interrupted, message: DEADLINE_MESSAGE.to_owned() }
        }
        Ending::HolderGone { in_batch } => {
            let message = if *in_batch { BATCH_LEASE_PASSED_MESSAGE } else { HEARTBEATS_STOPPED_MESSAGE };
            let (code, message) = (ErrorCode::Interrupted, message.to_owned());
            if attempts_left {
                // The backoff, as any retry: a worker that died on this task (out of memory, a
                // crash in a dependency) may die again, and tasks a dead instance held together
                // should not all come back together.
                Decision::Requeue { code, message, delay: backoff }
            } else {
                Decision::Fail { code, message }
            }
        }
        Ending::CancelRequested => Decision::EndCanceled,
        Ending::LeaseLost => Decision::Abandon,
        // The queue timeout bounds a task's time from its creation: a task the limits kept
        // waiting that long ends, rather than being given back forever.
        Ending::Throttled(_) if age >= config.queue_timeout => {
            Decision::Fail { code: ErrorCode::QueueTimeout, message: LIMITED_MESSAGE.to_owned() }
        }
        // Whatever the attempt number: nothing was spent.
        Ending::Throttled(delay) => Decision::GiveBack { delay: *delay },
        Ending::NoTime if age >= config.queue_timeout => {
            Decision::Fail { code: ErrorCode::QueueTimeout, message: UNWORKED_MESSAGE.to_owned() }
        }
        Ending::NoTime => Decision::GiveBack { delay: Duration::ZERO },
        // Whatever its age: a held task does not expire (its timeout counts from its release).
        Ending::Held(holds) => Decision::Park { holds, probe: config.holds.probe },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aitasks_providers::Usage;
    use serde_json::json;

    fn completion() -> Completion {
        Completion {
            output: json!("positive"),
            usage: Usage {
                input_tokens: 1,
                output_tokens: 1,
                model: "m".into(),
                latency_ms: 1,
                calls: 1,
                profile: None,
                estimated_cost_usd: None,
            },
        }
    }

    fn server_error() -> ProviderError {
        ProviderError::Server { status: 503, message: "busy".into() }
    }

    fn requeue(code: ErrorCode, message: &str, delay: u64) -> Decision<'static> {
        Decision::Requeue { code, message: message.to_owned(), delay: Duration::from_secs(delay) }
    }

    #[test]
    fn every_ending_decides_one_write() {
        let config = RuntimeConfig::default();
        let rate_limited = ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(30)),
            message: "slow down".into(),
        };
        let auth = ProviderError::Auth { status: 401 };
        let loop_failed = ProviderError::LoopFailed("no".into());
        let output = completion();
        let cases: Vec<(&str, Ending, i32, i32, Decision)> = vec![
            ("an output is stored", Ending::Finished(Ok(completion())), 1, 3, Decision::Complete(&output)),
            (
                "an output on the last attempt too",
                Ending::Finished(Ok(completion())),
                3,
                3,
                Decision::Complete(&output),
            ),
            (
                "a retryable error with attempts left backs off 1 s",
                Ending::Finished(Err(server_error())),
                1,
                3,
                requeue(ErrorCode::ProviderError, &server_error().public_message(), 1),
            ),
            (
                "then 2 s",
                Ending::Finished(Err(server_error())),
                2,
                3,
                requeue(ErrorCode::ProviderError, &server_error().public_message(), 2),
            ),
            (
                "a retryable error on the last attempt fails",
                Ending::Finished(Err(server_error())),
                3,
                3,
                Decision::Fail { code: ErrorCode::ProviderError, message: server_error().public_message() },
            ),
            (
                "the provider's Retry-After wins over a shorter backoff",
                Ending::Finished(Err(rate_limited.clone())),
                1,
                3,
                requeue(ErrorCode::ProviderError, &rate_limited.public_message(), 30),
            ),
            (
                "a loop failure is retried",
                Ending::Finished(Err(loop_failed.clone())),
                1,
                2,
                requeue(ErrorCode::LoopFailed, &loop_failed.public_message(), 1),
            ),
            (
                "a settings error fails at once",
                Ending::Finished(Err(auth.clone())),
                1,
                3,
                Decision::Fail { code: ErrorCode::ProviderAuth, message: auth.public_message() },
            ),
            (
                "a deadline with attempts left requeues at once",
                Ending::Deadline,
                1,
                3,
                requeue(ErrorCode::Interrupted, DEADLINE_MESSAGE, 0),
            ),
            (
                "a deadline on the last attempt fails",
                Ending::Deadline,
                3,
                3,
                Decision::Fail { code: ErrorCode::Interrupted, message: DEADLINE_MESSAGE.to_owned() },
            ),
            (
                "an unexpected error with attempts left is retried as a runtime error",
                Ending::Unexpected("a panic".into()),
                1,
                3,
                requeue(ErrorCode::RuntimeError, UNEXPECTED_MESSAGE, 1),
            ),
            (
                "an unexpected error on the last attempt fails",
                Ending::Unexpected("a panic".into()),
                3,
                3,
                Decision::Fail { code: ErrorCode::RuntimeError, message: UNEXPECTED_MESSAGE.to_owned() },
            ),
            (
                "a worker gone silent with attempts left is retried after the backoff",
                Ending::HolderGone { in_batch: false },
                2,
                3,
                requeue(ErrorCode::Interrupted, HEARTBEATS_STOPPED_MESSAGE, 2),
            ),
            (
                "a worker gone silent on the last attempt fails",
                Ending::HolderGone { in_batch: false },
                3,
                3,
                Decision::Fail {
                    code: ErrorCode::Interrupted,
                    message: HEARTBEATS_STOPPED_MESSAGE.to_owned(),
                },
            ),
            (
                "a batch whose lease passed, with attempts left, is retried after the backoff",
                Ending::HolderGone { in_batch: true },
                1,
                2,
                requeue(ErrorCode::Interrupted, BATCH_LEASE_PASSED_MESSAGE, 1),
            ),
            ("a requested cancel ends canceled", Ending::CancelRequested, 1, 3, Decision::EndCanceled),
            ("a lost lease writes nothing", Ending::LeaseLost, 2, 3, Decision::Abandon),
            (
                "an attempt claimed too late to call anyone goes back uncounted",
                Ending::NoTime,
                3,
                3,
                Decision::GiveBack { delay: Duration::ZERO },
            ),
            (
                "a provider limit gives the claim back, even on the last attempt",
                Ending::Throttled(Duration::from_secs(7)),
                3,
                3,
                Decision::GiveBack { delay: Duration::from_secs(7) },
            ),
        ];
        for (name, ending, attempt, budget, expected) in cases {
            // At the top of the jitter, the delay is the cap.
            assert_eq!(decide(&ending, attempt, budget, Duration::ZERO, &config, 1.0), expected, "{name}");
        }
    }

    #[test]
    fn a_task_the_limits_kept_waiting_past_the_queue_timeout_fails() {
        let config = RuntimeConfig::default();
        let throttled = Ending::Throttled(Duration::from_secs(2));
        let young = decide(&throttled, 1, 3, config.queue_timeout / 2, &config, 0.5);
        assert_eq!(young, Decision::GiveBack { delay: Duration::from_secs(2) });
        let old = decide(&throttled, 1, 3, config.queue_timeout, &config, 0.5);
        assert_eq!(
            old,
            Decision::Fail { code: ErrorCode::QueueTimeout, message: LIMITED_MESSAGE.to_owned() }
        );
    }

    #[test]
    fn a_task_stopped_before_every_call_fails_once_past_the_queue_timeout() {
        let config = RuntimeConfig::default();
        let young = decide(&Ending::NoTime, 1, 3, config.queue_timeout / 2, &config, 0.5);
        assert_eq!(young, Decision::GiveBack { delay: Duration::ZERO });
        let old = decide(&Ending::NoTime, 1, 3, config.queue_timeout, &config, 0.5);
        assert_eq!(
            old,
            Decision::Fail { code: ErrorCode::QueueTimeout, message: UNWORKED_MESSAGE.to_owned() }
        );
    }

    #[test]
    fn the_delay_is_jittered_below_the_cap_and_never_below_retry_after() {
        let config = RuntimeConfig::default();
        let delay = |error: ProviderError, jitter: f64| match decide(
            &Ending::Finished(Err(error)),
            3,
            5,
            Duration::ZERO,
            &config,
            jitter,
        ) {
            Decision::Requeue { delay, .. } => delay,
            other => panic!("{other:?}"),
        };
        assert_eq!(delay(server_error(), 0.0), Duration::ZERO);
        assert_eq!(delay(server_error(), 0.25), Duration::from_secs(1), "a quarter of the 4 s cap");
        assert_eq!(delay(server_error(), 7.0), Duration::from_secs(4), "clamped to the cap");
        let asked =
            ProviderError::RateLimited { retry_after: Some(Duration::from_secs(3)), message: String::new() };
        assert_eq!(delay(asked, 0.0), Duration::from_secs(3), "the provider's Retry-After is a floor");
    }

    /// What a task stores is what its tenant reads: never the provider's URL or body.
    #[test]
    fn stored_messages_hold_no_provider_detail() {
        let config = RuntimeConfig::default();
        let internal = "http://10.0.0.7:8080/v1 said: {\"error\": \"secret-ish body\"}";
        let errors = [
            ProviderError::RateLimited { retry_after: None, message: internal.into() },
            ProviderError::Connection(internal.into()),
            ProviderError::Server { status: 502, message: internal.into() },
            ProviderError::Malformed(internal.into()),
            ProviderError::LoopFailed(internal.into()),
            ProviderError::ModelUnknown(internal.into()),
            ProviderError::Rejected { status: 400, message: internal.into() },
        ];
        for error in errors {
            for attempt in [1, 3] {
                let ending = Ending::Finished(Err(error.clone()));
                let message = match decide(&ending, attempt, 3, Duration::ZERO, &config, 0.5) {
                    Decision::Requeue { message, .. } | Decision::Fail { message, .. } => message,
                    other => panic!("{other:?}"),
                };
                assert!(!message.contains("10.0.0.7") && !message.contains("body"), "{message}");
            }
        }
    }
}
