//! process-task's handler with real SQS events, a real store and stub providers speaking their
//! wire formats.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod database_down;
mod deadline;
mod fallbacks;
mod group_commit;
mod handed_over;
mod hostile_usage;
mod late_claims;
mod line_capacity;
mod model_config;
mod output_bound;
mod provider_limits;
mod records;
mod unexpected_errors;
mod unworked_records;
