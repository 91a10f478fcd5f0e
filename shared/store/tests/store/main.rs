//! The store against a real Postgres: a database of its own for each test (`TestDb`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activity;
mod admission;
mod attempts;
mod bounded_work;
mod callbacks;
mod create_many;
mod deferred;
mod handed_over;
mod holds;
mod lifecycle;
mod limits;
mod limits_hostile_usage;
mod live_output;
mod lock_order;
mod migrations;
mod plans;
mod privileges;
mod read_rate;
mod round_trips;
mod statements;
mod stored_size;
mod sweeps;
mod task_indexes;
mod tls;
mod young_tables;

mod migration_v38;
mod stale;
mod status_changes;
