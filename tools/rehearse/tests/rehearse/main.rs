//! The deploy rehearsal's own tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batches;
mod migrate_answers;
mod rehearsal;
