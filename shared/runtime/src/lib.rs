//! aitasks runtime: what the Lambda functions do, independent of the event shapes they are
//! invoked with.
//!
//! - [`api`]: the HTTP API's operations (create, read, wait, cancel, release, delete, list),
//!   returning domain results or an [`ApiError`].
//! - [`worker`]: process-task's one path, an invocation's tasks claimed in one statement, each
//!   attempt run (provider calls with a cancellation poll every `AITASK_CANCEL_POLL_MS`, a
//!   heartbeat of the row and the message every `AITASK_HEARTBEAT_MS`, a stop before the Lambda
//!   deadline) and settled fenced, the successes that finish together completed together.
//! - [`sweeper`]: expiry, re-sends, event re-delivery, pruning and retention: a table of duties,
//!   each in bounded pages.
//! - [`batcher`]: deferred tasks through the providers' batch APIs, the sweeper's batch duties.
//! - `settle`: the one settlement of an attempt, the worker's and the batcher's alike (decide,
//!   write fenced, log and metrics, publish).
//! - [`callbacks`]: answering and heartbeating the callers that wait for a task (Step Functions
//!   task tokens, Lambda durable-function callbacks), through the outbox.
//! - [`intake`]: the intake queue's messages, each a create with its task token.
//! - [`App`]: the pool, queues, model profiles and provider, the callbacks' clients and the
//!   event bus, built once per cold start; [`App::publish`] tells of the tasks that ended.
//!
//! - [`read_rate`]: each tenant's read rate, charged by every read of the API.
//!
//! - [`replays`] and [`operations`]: a replay made through `create`, and cancel or replay by
//!   filter, worked in pages under a lease (by the request, then the sweeper's `operations` duty).
//!
//! The modules depend on each other in one direction: `operations` → `replays` → `create`;
//! `sweeper` → `operations`; `intake` → `api` → `create` →
//! `admission`, `callback_limits`; `sweeper` → `batcher`; `worker`, `batcher` → `settle` (which
//! writes through the store alone: it publishes nothing itself); `worker`, `sweeper`, `batcher`
//! → `app` → `callbacks`, `bus`, `config`, `queue`, `secrets`, `aws`; and `metrics` below
//! everything. `aws` and the secrets come from the `aitasks_secrets` crate, [`xray`],
//! [`error_chain`] and [`panic_text`] from `aitasks_telemetry`, both re-exported here (`migrate`
//! uses them without the runtime).

mod admission;
pub mod answers;
pub mod api;
mod api_error;
mod app;
pub mod batcher;
pub mod bus;
mod callback_limits;
pub mod callbacks;
pub mod config;
mod create;
mod failing_profiles;
pub mod history;
pub mod holds;
pub mod intake;
pub mod live_output;
pub mod metrics;
pub mod operations;
mod publish;
pub mod queue;
pub mod read_rate;
pub mod replays;
pub mod secrets;
mod settle;
pub mod sweeper;
pub mod worker;

pub use aitasks_secrets::aws;
pub use aitasks_telemetry::{error_chain, panic_text, xray};
pub use api_error::ApiError;
pub use app::{App, StartupError};
pub use config::{ConfigError, RuntimeConfig, Settings};
pub use queue::{Queues, TaskMessage};
