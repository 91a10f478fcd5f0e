//! The tests that take the shared local services down on purpose (Postgres restarted, the
//! SQS-compatible server killed): a binary of their own, so that no other test runs while they
//! do, and one at a time inside it ([`OUTAGE`]). `make chaos` runs `chaos` long.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chaos;
mod restart;

/// Held by a test for as long as it takes services down: the outages never overlap.
static OUTAGE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
