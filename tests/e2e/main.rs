//! The end-to-end tests: the dev server (every function behind one local server, invoked with
//! the real event shapes), Postgres, the SQS-compatible server and stub providers speaking
//! their wire formats. Each test starts a stack of its own. `make load` and `make fuzz` run
//! `load` and `fuzz` long.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_hygiene;
mod batch_results;
mod bounded;
mod charts;
mod contract;
mod create_many_and_pages;
mod deferred;
mod durable_callbacks;
mod event_bus;
mod functions;
mod fuzz;
mod graceful;
mod history;
mod holds;
mod hostile;
mod live_output;
mod live_output_hostile;
mod load;
mod local_model;
mod logs;
mod metrics;
mod operations;
mod quotas;
mod read_rate;
mod replays;
mod run_keys;
mod schedule;
mod scoped;
mod step_functions;
mod traces;
