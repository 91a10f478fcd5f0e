//! The contract's integration tests: answers judged, malformed input refused, and the
//! property tests (`make chaos` runs them long: `cargo test -p aitasks-contracts --test contracts properties`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod answers;
mod bounded;
mod malformed;
mod properties;
mod schema_agreement;
