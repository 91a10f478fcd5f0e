//! Settling an attempt: ending it as its task's holder, for an on-demand attempt (process-task's
//! worker) and a provider batch's answer (the batcher) alike, each step written once:
//!
//! 1. decide ([`Attempt::decide`], the pure [`decision::decide`] with its [`jitter`]): what the
//!    ending writes;
//! 2. write, fenced on the lease: the successes that end together in one statement
//!    ([`complete_together`]: a task that statement cannot take is written alone, and when the
//!    statement fails each is written alone, so one row's bad data never costs another task its
//!    attempt); any other decision alone ([`write_decision`]: a failure, a requeue, a give-back);
//! 3. the settlement's one log line and its metrics ([`record`]);
//! 4. its completion event published (`App::publish`), by the caller: the worker's group commit
//!    publishes its group's events together, the batcher a page's.
//!
//! The words, one meaning each: to *settle* is to end an attempt (a task's terminal write, or its
//! way back to the queue); to *requeue* is to put a task back in the queue for a counted retry,
//! its error kept; to *give back* is to put it back with its attempt uncounted (nothing was
//! spent: a provider limit, no time left, a late claim, a batch that did not answer for it).
//!
//! What stays with each caller is what only it has: the worker's SQS message and its group
//! commit of one invocation's successes, the batcher's pages of result lines and its summary.

mod carry;
mod complete;
pub(crate) mod decision;
pub(crate) mod jitter;
mod record;

use aitasks_store::{BatchTask, Lease, Task};
use chrono::{DateTime, Utc};

use crate::config::RuntimeConfig;

pub(crate) use carry::{write_decision, Carried};
pub(crate) use complete::{complete_together, stored_usage, Success};
pub(crate) use decision::{Decision, Ending};
pub(crate) use record::record;

/// The attempt a settlement ends, as its holder knows it: the lease every write is fenced on,
/// and what the decision and the log line read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt<'a> {
    pub(crate) lease: Lease,
    pub(crate) app_id: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) model_id: &'a str,
    pub(crate) max_attempts: i32,
    created_at: DateTime<Utc>,
    deferred_by: Option<DateTime<Utc>>,
}

impl<'a> Attempt<'a> {
    /// A claimed task's attempt.
    pub(crate) fn of_task(task: &'a Task) -> Attempt<'a> {
        Attempt {
            lease: task.lease(),
            app_id: &task.app_id,
            kind: &task.kind,
            model_id: &task.model_id,
            max_attempts: task.max_attempts,
            // A task a hold parked counts its queue timeout from its release.
            created_at: task.unheld_at.unwrap_or(task.created_at),
            deferred_by: task.deferred_by,
        }
    }

    /// A batch task's attempt, run by the batch of profile `model_id` (the task's own).
    pub(crate) fn of_batch_task(task: &'a BatchTask, model_id: &'a str) -> Attempt<'a> {
        Attempt {
            lease: task.lease,
            app_id: &task.app_id,
            kind: task.request["kind"].as_str().unwrap_or_default(),
            model_id,
            max_attempts: task.max_attempts,
            created_at: task.created_at,
            deferred_by: task.deferred_by,
        }
    }

    /// What `ending` writes for this attempt: its budget, its age as the queue timeout reads it,
    /// and a random jitter for a retry's delay.
    pub(crate) fn decide<'e>(&self, ending: &'e Ending, runtime: &RuntimeConfig) -> Decision<'e> {
        let age = decision::timeout_age(self.created_at, self.deferred_by, runtime);
        let jitter = jitter::random_fraction();
        decision::decide(ending, self.lease.attempt, self.max_attempts, age, runtime, jitter)
    }
}
