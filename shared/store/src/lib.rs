//! The one PostgreSQL store of aitasks. It owns every SQL statement of the project; the Lambda
//! functions and the runtime call these operations and never talk to Postgres themselves.
//!
//! Every operation takes any [`GenericClient`] (a pooled client or a transaction), uses
//! `prepare_cached` statements, and maps driver errors to [`StoreError`].
//!
//! Every statement is written out in full in its own file under `shared/store/sql/` (the SQL
//! that completes a task is `sql/settle/complete.sql`), with named parameters bound by name;
//! `tests/snapshots/statements.snap` shows each exactly as Postgres gets it, and
//! [`queries::statements`] lists them.
//!
//! # Round trips on the happy path
//!
//! With the connection's statement cache warm (every call after the first on a connection):
//!
//! | operation | round trips | why one is enough |
//! | --- | --- | --- |
//! | [`create_task`] | 1 | the run check (`FOR SHARE`), the insert and `ON CONFLICT` are one statement |
//! | [`claim`] | 1 | a fenced `UPDATE ... RETURNING` |
//! | [`heartbeat`] (with the cancel check) | 1 | `UPDATE ... RETURNING cancel_requested_at IS NOT NULL` |
//! | [`check`] (cancel poll) | 1 | a primary-key read |
//! | [`complete_attempt`] with its completion event | 1 | the event insert is a data-modifying CTE of the update |
//!
//! The test `round_trips` in `tests/round_trips.rs` counts the statements the server received
//! for each operation (through `pg_stat_statements`) and holds these numbers.
//!
//! # Fencing
//!
//! A claim increments `attempts`; the worker keeps the [`Lease`] `(task id, attempt)` and every
//! later write matches it together with the state it expects. A stale worker's late write after
//! a requeue, a cancel or another worker's claim changes nothing and reports
//! [`Fenced::Lost`], [`Fenced::Lost`] or [`LeaseCheck::Lost`].

mod admission;
mod batch;
mod batch_lease;
mod error;
mod events;
mod lease;
mod limits;
mod listing;
mod model;
mod owned;
mod pool;
pub mod queries;
mod quota;
mod runs;
mod settle;
mod sql;
mod statement;
mod stats;
mod sweep;
mod tasks;

pub use admission::{
    create_scoped, create_scoped_with, AdmissionBudget, AdmissionRefusal, ScopedAdmission, ScopedCreated,
    Serialization, ServerLimits,
};
pub use batch::{create_tasks, mark_sent_many};
pub use batch_lease::{claim_many, complete_many};
pub use error::{StoreError, StoreResult};
pub use events::{lease_pending_events, mark_delivered, prune_delivered_events};
pub use lease::{check, claim, heartbeat, requeue_attempt};
pub use limits::{
    add_tokens, free_slot, minute_of, prune_provider_usage, release_claim, start_call, take_slot,
};
pub use listing::list_tasks;
pub use model::{
    Claim, Created, Fenced, Lease, LeaseCheck, NewRun, NewTask, PendingEvent, Run, RunState, Settled, Task,
    TaskOwner, TaskStatus,
};
pub use owned::{
    delete_owned, delete_owned_batch, delete_retained, release, unreleased_sources, SourceRef,
    UNRELEASED_PAGE,
};
pub use pool::{
    client, connect, migrate, migrate_with, redact, tls_connector, Client, GenericClient, PoolSettings,
    StorePool,
};
pub use quota::{create_task_within_quota, prune_usage};
pub use runs::{
    cancel_run, cancel_run_tasks, create_run, finish_run_cancel, get_run, pending_run_cancels,
    RunTasksCanceled,
};
pub use settle::{complete_attempt, end_canceled, fail_attempt};
pub use stats::{backlog, overview, Backlog, Overview};
pub use sweep::{
    claim_lost, claim_unsent, expire_queued, expire_running, mark_sent, mark_unsent, owed_beyond,
    prune_admissions, ExpiredRunning, OwedMessage,
};
pub use tasks::{create_task, get_task, get_task_by_effect_key, request_cancel, CancelRequest};

/// The limits the store enforces are the contract's (one owner: the contracts crate).
pub use aitasks_contracts::{ERROR_MESSAGE_MAX_CHARS, REQUEST_MAX_BYTES};
