//! How long the section runs at each size. Full (`make bench`, at most about 15 minutes with
//! every peer): a fixed 100 jobs/s for 30 s (one window of the method) with 4 and with 16
//! workers; with 16, a ladder of rates, 15 s each, climbed while sustained; the three chaos
//! cells, 24 s each at 100 jobs/s, the fault 8 s in. Quick (`BENCH_QUICK=1`): the same shape,
//! short. Smoke (`BENCH_SMOKE=1`, inside `make test`, whose Postgres other tests share): this
//! system and the SQS hop only, 4 workers, a 2 s run, the kill and long-transaction cells (no
//! restart of a shared server).

use std::time::Duration;

use super::phase::Fault;
use crate::size::Size;

pub(crate) struct Plan {
    pub(crate) fixed_workers: Vec<usize>,
    pub(crate) fixed_rate: f64,
    pub(crate) fixed_seconds: f64,
    pub(crate) ladder_workers: usize,
    pub(crate) ladder: Vec<f64>,
    pub(crate) step_seconds: f64,
    pub(crate) chaos: Vec<Fault>,
    pub(crate) chaos_seconds: f64,
    /// The method's window for pickup percentiles.
    pub(crate) window: Duration,
    /// How long after the producer's end a phase waits for its last completions.
    pub(crate) drain: Duration,
    pub(crate) peers: bool,
}

const ALL: [Fault; 3] = [Fault::KillWorkers, Fault::RestartPostgres, Fault::LongTransaction];

impl Plan {
    pub(crate) fn of(size: Size) -> Plan {
        match size {
            Size::Full => Plan {
                fixed_workers: vec![4, 16],
                fixed_rate: 100.0,
                fixed_seconds: 30.0,
                ladder_workers: 16,
                ladder: vec![250.0, 500.0, 1000.0, 2000.0, 4000.0],
                step_seconds: 15.0,
                chaos: ALL.to_vec(),
                chaos_seconds: 24.0,
                window: Duration::from_secs(30),
                drain: Duration::from_secs(12),
                peers: true,
            },
            Size::Quick => Plan {
                fixed_workers: vec![4, 16],
                fixed_rate: 100.0,
                fixed_seconds: 8.0,
                ladder_workers: 16,
                ladder: vec![400.0, 1600.0],
                step_seconds: 6.0,
                chaos: ALL.to_vec(),
                chaos_seconds: 9.0,
                window: Duration::from_secs(30),
                drain: Duration::from_secs(6),
                peers: true,
            },
            Size::Smoke => Plan {
                fixed_workers: vec![4],
                fixed_rate: 50.0,
                fixed_seconds: 2.0,
                ladder_workers: 4,
                ladder: Vec::new(),
                step_seconds: 0.0,
                chaos: vec![Fault::KillWorkers, Fault::LongTransaction],
                chaos_seconds: 3.0,
                window: Duration::from_secs(30),
                // A killed worker's tasks come back once their heartbeat is 5 s old.
                drain: Duration::from_secs(15),
                peers: false,
            },
        }
    }
}
