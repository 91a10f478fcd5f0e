//! create-task's handlers against the store, beyond what the end-to-end tests see.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bounded_cancel;
mod callback_limits;
mod long_poll;
mod owed_after_error;
mod request_memory;
mod sweep_budget;
