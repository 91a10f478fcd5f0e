//! How long a run is: a full one (`make bench`), a quick one (`BENCH_QUICK=1`, CI-sized
//! figures), or the smoke run (`BENCH_SMOKE=1`, the `bench_smoke` test of `make test`): every
//! section's setup, reset and smallest point, on whatever build runs it, in seconds. A smoke
//! run's figures mean nothing; that it finishes means the benchmark still works.

use std::time::Duration;

use crate::pgbench::Limit;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    Full,
    Quick,
    Smoke,
}

impl Size {
    pub(crate) fn from_env() -> Size {
        let set = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
        if set("BENCH_SMOKE") {
            Size::Smoke
        } else if set("BENCH_QUICK") {
            Size::Quick
        } else {
            Size::Full
        }
    }

    pub(crate) fn is_smoke(self) -> bool {
        self == Size::Smoke
    }

    /// A measured point: `full` or `quick` seconds, a fifth of a second in a smoke run.
    pub(crate) fn point(self, full: u64, quick: u64) -> Duration {
        match self {
            Size::Full => Duration::from_secs(full),
            Size::Quick => Duration::from_secs(quick),
            Size::Smoke => Duration::from_millis(200),
        }
    }

    /// A pgbench run as long as `point`; in a smoke run a few transactions a client instead
    /// (pgbench's shortest timed run is a second).
    pub(crate) fn pgbench(self, point: Duration) -> Limit {
        match self {
            Size::Smoke => Limit::Transactions(5),
            _ => Limit::Duration(point),
        }
    }

    /// A count: `full`, `quick`, or `smoke`.
    pub(crate) fn pick<T>(self, full: T, quick: T, smoke: T) -> T {
        match self {
            Size::Full => full,
            Size::Quick => quick,
            Size::Smoke => smoke,
        }
    }

    /// Client counts: in a smoke run each at most 4 (duplicates dropped), so that it stays
    /// within the test cluster's connections while other tests run.
    pub(crate) fn clients(self, list: &[usize]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::with_capacity(list.len());
        for &clients in list {
            let clients = if self.is_smoke() { clients.min(4) } else { clients };
            if !out.contains(&clients) {
                out.push(clients);
            }
        }
        out
    }

    /// One client count, as [`Size::clients`] maps it.
    pub(crate) fn client_count(self, clients: usize) -> usize {
        if self.is_smoke() {
            clients.min(4)
        } else {
            clients
        }
    }
}
