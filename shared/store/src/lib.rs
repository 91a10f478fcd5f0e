//! The one PostgreSQL store of aitasks. It owns every SQL statement of the project; the Lambda
//! functions and the runtime call these operations and never talk to Postgres themselves.
//!
//! Every operation takes any [`GenericClient`] (a pooled client or a transaction), uses
//! `prepare_cached` statements, and maps driver errors to [`StoreError`].
//!
//! The modules follow a task's life: [`create`](create_task) (and scoped admission, and the
//! tenant's daily quota), read, lease (claim and check in), settle, cancel, sweep, the events
//! outbox and the callbacks it owes, application-owned data, listing, provider-side limits.
//! Every statement is in its own file under `shared/store/sql/`, in the folder of the module
//! that runs it and named for the function that does (the SQL of [`complete_attempt`] is
//! `sql/settle/complete_attempt.sql`; pieces several statements share are in `sql/fragments/`),
//! with named parameters bound by name;
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
//! | [`claim_by`] (one task or a batch's ten) | 1 | a fenced `UPDATE ... RETURNING`, rows locked in id order |
//! | [`heartbeat`] (with the cancel check) | 1 | `UPDATE ... RETURNING cancel_requested_at IS NOT NULL` |
//! | [`check`] (cancel poll) | 1 | a primary-key read |
//! | [`complete_attempt`] with its completion event | 1 | the event insert is a data-modifying CTE of the update |
//! | [`complete_many`] (the successes that finish together) | 1 | the same, for every attempt at once |
//!
//! The test `round_trips` in `tests/store/round_trips.rs` counts the statements the server received
//! for each operation (through `pg_stat_statements`) and holds these numbers.
//!
//! # Fencing
//!
//! A claim increments `attempts`; the worker keeps the [`Lease`] `(task id, attempt)` and every
//! later write matches it together with the state it expects. A stale worker's late write after
//! a requeue, a cancel or another worker's claim changes nothing and reports
//! [`Fenced::Lost`], [`Fenced::Lost`] or [`LeaseCheck::Lost`].

mod activity;
mod admission;
mod attempts;
mod batch_copies;
mod batch_form;
mod batches;
mod callbacks;
mod cancel;
mod create;
mod error;
mod events;
mod history;
mod holds;
mod lease;
mod listing;
mod migrations;
mod model;
mod operations;
mod output;
mod owned;
mod params;
mod pool;
mod provider_limits;
pub mod queries;
mod read;
mod read_rate;
mod repair;
mod replays;
mod rows;
mod runs;
mod settle;
mod statement;
mod stats;
mod summary;
mod sweep;
mod tenant_quota;

pub use activity::{activity, fold_activity, prune_activity};
pub use admission::create_scoped;
pub use attempts::{task_attempts, AttemptsOfTask};
pub use batch_copies::{
    add_extra_batches, known_provider_batches, next_batch_cleanup, note_submit_refused, note_submit_sending,
    other_rows_unsure, take_batch_leftovers, BatchLeftovers,
};
pub use batch_form::{
    batch_waiting, form_batch, nearest_window, send_due_now, send_profile_now, BatchGroup, Formed,
};
pub use batches::{
    batch_tasks, end_batch, give_back_batch, look_at_batch_later, look_at_batch_now, mark_batch_submitted,
    prune_ended_batches, take_due_batches, BatchOutcome, BatchState, BatchTask, OpenBatch,
};
pub use callbacks::{
    attach_callbacks, callback_room, cancel_abandoned, mark_delivered_and_take_owed, record_callbacks,
    take_heartbeats, take_owed_callbacks, unmark_heartbeats, waiting_callbacks, CallbackEnd, CallbackRoom,
    DueHeartbeat, NewCallback, OwedCallback, TaskEnd, WaitingCallbacks,
};
pub use cancel::{
    cancel_run, cancel_run_tasks, finish_run_cancel, pending_run_cancels, request_cancel, CancelRequest,
    RunTasksCanceled,
};
pub use create::{create_task, create_tasks, mark_pollers, owe_again};
pub use error::{StoreError, StoreResult};
pub use events::{
    hand_back, hand_back_recent, mark_delivered, newest_handed_over, prune_delivered_events,
    take_handed_over, take_undelivered_events, TakenBack,
};
pub use history::{list_runs, task_batch, task_callbacks, task_events, BatchOfTask, RunsOfApp};
pub use holds::{
    automatic_holds_active, claim_probe, get_hold, list_holds, note_failure, park, place_hold, release_hold,
    resend_held, reset_failures, take_probe, unfinished_holds, FailureNoted, Hold, HoldTarget, Parked,
    Placed, Resent, UnfinishedHold,
};
pub use lease::{check, claim_by, give_back_claims, heartbeat, ClaimMark};
pub use listing::{list_tasks, ListedTasks};
pub use migrations::{
    concurrent_statements, is_outside_a_transaction, migrate, migrate_until, migrate_with, migrate_with_more,
    ConcurrentStatement, NO_TRANSACTION,
};
pub use model::{
    ActiveHold, AdmissionBudget, AdmissionRefusal, Claim, Created, CreatedRun, Custody, Ended, Fenced, Lease,
    LeaseCheck, ListedTask, NewRun, NewTask, PendingEvent, Run, RunState, ScopedAdmission, ScopedCreated,
    ServerLimits, Task, TaskOwner, TaskStatus,
};
pub use operations::{
    create_operation, get_operation, list_operations, next_operations, stop_operation, take_operation,
    CreatedOperation, NewOperation, OperationLease, PageCounts, Walk,
};
pub use output::{append_chunk, open_segment, prune_outputs, read_output, Chunk, OutputLook, StreamLook};
pub use owned::{
    delete_owned_page, delete_retained, release, unreleased_sources, SourceRef, UNRELEASED_PAGE,
};
pub use pool::{client, connect, redact, tls_connector, Client, GenericClient, PoolSettings, StorePool};
pub use provider_limits::{
    free_slot, minute_of, prune_provider_line, prune_provider_minutes, reconcile_tokens, start_call,
    take_slot, wait_in_line, CallStart, CallToCount, MinuteLimits, SlotToTake,
};
pub use read::{get_task, get_task_by_effect_key};
pub use read_rate::{spend_reads, ReadBucket, ReadSpend};
pub use repair::{give_back_for_repair, read_repair, take_repair};
pub use replays::{replay_sources, task_replays, ReplaySource};
pub use runs::{create_run, get_run, run_progress};
pub use settle::{complete_attempt, complete_many, end_canceled, fail_attempt, give_back, requeue_attempt};
pub use stats::{backlog, overview, Backlog, Overview};
pub use summary::summary;
pub use sweep::{
    expire_queued, expire_running, mark_unsent, owed_beyond, prune_admissions, take_lost, take_stale_running,
    take_unsent, ExpiredRunning, OwedMessage, StaleAttempt, StaleEnding,
};
pub use tenant_quota::{create_task_within_quota, prune_quota_days};

/// The limits the store enforces are the contract's (one owner: the contracts crate).
pub use aitasks_contracts::{ERROR_MESSAGE_MAX_CHARS, REQUEST_MAX_BYTES};
