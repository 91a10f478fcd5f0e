//! process-task's handler with real SQS events, a real store and stub providers speaking their
//! wire formats.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batches;
mod common;
mod database_down;
mod deadline;
mod fallbacks;
mod group_commit;
mod late_claims;
mod model_config;
mod provider_limits;
mod unexpected_errors;
