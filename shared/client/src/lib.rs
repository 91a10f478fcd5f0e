//! A typed client of the aitasks HTTP API (docs/api.md, openapi.yaml).
//!
//! - Requests and answers are typed: [`Task`], [`Run`], [`TaskPage`], [`CreateManyReport`]; statuses
//!   and states are the contract's own types ([`TaskStatus`], [`RunState`]), and a create body
//!   ([`TaskBody`]) can be checked by the API's own parser before it is sent.
//! - Every call is tried again on 429 and 5xx as [`RetryPolicy`] says (jittered backoff, never
//!   shorter than `Retry-After`, a bounded number of tries); never on another 4xx.
//! - [`Client::create`] is idempotent on the effect key and tells a new task (201) from an
//!   existing one (200); [`Client::wait`] long-polls until the task ends or a deadline passes;
//!   [`Client::list`] streams a run's or a scope's tasks page by page; [`Client::create_many`]
//!   takes any number of bodies and sends them in chunks the API takes.
//! - Errors are [`Error`]: the API's refusals carry the HTTP status, the stable `code`, the
//!   message, the problems and the gateway's request id ([`ApiError`]).
//! - The API never redirects: a 3xx answer is [`Error::Redirect`], neither followed nor retried,
//!   so the token and the body are never sent to the address it names.
//! - Bounds: one try takes at most [`DEFAULT_TIMEOUT`] (30 s, set with
//!   [`ClientBuilder::timeout`]) plus a long poll's wait (at most 20 s); an answer over
//!   [`MAX_ANSWER_BYTES`] (8 MiB) is not the API's and is not read.
//!
//! Each group of routes is a module with an `impl Client` block over one private `send` (the
//! retries, the error mapping), and its answers are types in `answers`: a new route is one more
//! such method and type. The history routes (`history`): [`Client::runs`],
//! [`Client::task_attempts`], [`Client::task_events`], [`Client::task_callbacks`],
//! [`Client::task_batch`], [`Client::summary`].
//!
//! Acting on many tasks at once (docs/api.md): [`Client::replay`] makes a new task of an ended
//! one (idempotent on its derived effect key) and [`Client::replays`] lists a task's replays;
//! [`Client::create_operation`] cancels or replays every task a filter matches as an
//! asynchronous operation (an `Idempotency-Key` per call, or the caller's with
//! [`Client::create_operation_with_key`]), read with [`Client::get_operation`] and
//! [`Client::operations`], followed with [`Client::wait_operation`], stopped with
//! [`Client::stop_operation`]; [`Client::create_hold`] holds a model profile or a scope (its
//! tasks stay queued and spend no attempt), [`Client::holds`] lists them and
//! [`Client::release_hold`] releases one.
//!
//! Live output (docs/api.md, "Live output"): [`Client::output`] reads a task's answer as the
//! model writes it from an offset ([`ReadOutput`], one long poll, one read unit however long it
//! waits); [`Client::follow_output`] gives it piece by piece ([`OutputFollower::next`], or
//! [`Client::output_stream`] as a `Stream`) by long polls of up to 20 s, tells when a new segment
//! voids the text so far ([`OutputPiece::restarted`]: a retry, a repair turn), and ends once the
//! task has ended and its stream is read; [`Client::follow_output_with`] resumes from the last
//! piece's `segment` and `next` without a gap or a repeat. The task (its output) stays the record.
//!
//! ```no_run
//! # async fn follow(client: aitasks_client::Client, id: uuid::Uuid) -> Result<(), aitasks_client::Error> {
//! let mut text = String::new();
//! let mut follower = client.follow_output(id);
//! while let Some(piece) = follower.next().await {
//!     let piece = piece?;
//!     if piece.restarted {
//!         text.clear(); // a new attempt writes its answer afresh
//!     }
//!     text.push_str(&piece.text);
//! }
//! let task = client.get(id).await?; // the record: its status and checked output
//! # Ok(())
//! # }
//! ```
//!
//! ```no_run
//! use std::time::Duration;
//! use aitasks_client::{Client, Outcome, TaskBody};
//! use serde_json::json;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new("http://127.0.0.1:9000", std::env::var("AITASKS_TOKEN")?)?;
//! let body = TaskBody::checked(json!({
//!     "owner": {"scopeId": "inbox"}, "stepKey": "label", "effectKey": "mail-42/label",
//!     "modelId": "default",
//!     "request": {"kind": "classify", "prompt": "Is this mail spam?", "input": {"subject": "Win!"},
//!                 "choices": ["spam", "ham"]}
//! }))?;
//! let created = client.create(&body).await?;
//! if created.outcome == Outcome::Existing {
//!     println!("already asked: {}", created.task.id);
//! }
//! let task = client.wait(created.task.id, Duration::from_secs(120)).await?;
//! println!("{} {:?}", task.status, task.output);
//! # Ok(())
//! # }
//! ```

mod answers;
mod auth;
mod body;
mod client;
mod error;
mod follow;
mod history;
mod holds;
mod loopback;
mod many;
mod operations;
mod output;
mod replays;
mod retry;
mod runs;
mod scopes;
mod tasks;

pub use aitasks_contracts::{
    Activity, ActivityBucket, AttemptOutcome, AttemptUsage, DailyCost, ErrorCode, Kind, ListOperations,
    ListRuns, ListTasks, ListedRun, Operation, OperationAction, OperationFilter, OperationPage,
    OperationState, Problem, Problems, RunPage, RunProgress, RunState, StatusCounts, TaskAttempt,
    TaskAttempts, TaskBatch, TaskCallback, TaskCallbacks, TaskCounts, TaskEvent, TaskEvents, TaskFilter,
    TaskOutput, TaskReplay, TaskReplays, TaskStatus, TenantSummary, HOLD_PAGE_MAX, OPERATION_PAGE_MAX,
};
pub use answers::holds::{
    Hold, HoldCreated, HoldKind, HoldPage, HoldState, HoldTarget, ListHolds, ReleasedBy,
};
pub use answers::operations::{is_ended, NewOperation, NewOperationFilter, OperationCreated};
pub use answers::replays::Replay;
pub use answers::{
    Created, Deleted, Outcome, Released, Run, SourceRef, Task, TaskPage, TaskSummary, UnreleasedPage,
};
pub use auth::{Auth, TokenFuture, TokenProvider};
pub use body::TaskBody;
pub use client::{Client, ClientBuilder, DEFAULT_TIMEOUT, MAX_ANSWER_BYTES};
pub use error::{ApiError, Error};
pub use follow::{FollowOptions, OutputFollower, OutputPiece, OUTPUT_IDLE_PAUSE};
pub use history::all_runs;
pub use loopback::is_loopback;
pub use many::{plan_chunks, CreateManyCounts, CreateManyReport, ItemResult};
pub use operations::{all_operations, OPERATION_POLL};
pub use output::ReadOutput;
pub use retry::RetryPolicy;
pub use tasks::tasks_of;
