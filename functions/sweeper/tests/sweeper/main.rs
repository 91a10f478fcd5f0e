//! The sweeper function with a real store, real queues and stand-ins speaking AWS's and the
//! providers' wire formats: one test binary for the crate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod heartbeats;
mod lost_messages;
