//! The deploy rehearsal's own tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bedrock_batches;
mod migrate_answers;
mod rehearsal;
