//! aitasks runtime: what the Lambda functions do, independent of the event shapes they are
//! invoked with.
//!
//! - [`api`]: the HTTP API's operations (create, read, wait, cancel, release, delete, list),
//!   returning domain results or an [`ApiError`].
//! - [`process_batch`]: an SQS batch's tasks claimed in one statement, each attempt run by
//!   [`worker`] (provider call with a cancellation poll every `AITASK_CANCEL_POLL_MS`, a
//!   heartbeat of the row and the message every `AITASK_HEARTBEAT_MS`, a stop before the Lambda
//!   deadline → fenced settle → completion event), the successes that finish together
//!   completed together.
//! - [`sweeper`]: expiry, re-sends, event re-delivery, pruning and retention, in bounded
//!   batches.
//! - [`App`]: the pool, queues, model profiles and provider, built once per cold start.

pub mod admission;
pub mod answers;
pub mod api;
mod api_error;
mod app;
pub mod aws;
mod batch_worker;
mod calls;
pub mod config;
mod create;
pub mod decision;
mod errors;
pub mod metrics;
pub mod queue;
pub mod quotas;
pub mod redelivery;
pub mod secrets;
pub mod sweeper;
pub mod worker;
pub use batch_worker::process_batch;
pub mod xray;

pub use api_error::ApiError;
pub use app::{App, StartupError};
pub use config::{ConfigError, RuntimeConfig, Settings};
pub use errors::error_chain;
pub use queue::{Queues, TaskMessage};
