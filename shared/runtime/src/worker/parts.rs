//! The worker's own time on one attempt, by part, added up while the attempt runs: the claim
//! (its wave's statement), the provider limits' gate and the visibility calls (each beside the
//! others, so each adds to a counter of its own), and the settlement, reported with the
//! settlement's metrics (`crate::metrics::Parts`). With them, what the gate saw: whether it let
//! a call through (an attempt stopped before one was made cost nothing, and is not counted).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::metrics::Parts;

pub(super) struct PartTimes {
    claim: Duration,
    gate_us: AtomicU64,
    visibility_us: AtomicU64,
    called: AtomicBool,
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

impl PartTimes {
    /// An attempt whose wave's claim took `claim`.
    pub(super) fn new(claim: Duration) -> PartTimes {
        PartTimes {
            claim,
            gate_us: AtomicU64::new(0),
            visibility_us: AtomicU64::new(0),
            called: AtomicBool::new(false),
        }
    }

    /// The gate let a call through.
    pub(super) fn note_call(&self) {
        self.called.store(true, Ordering::Relaxed);
    }

    /// Whether any call went out.
    pub(super) fn called(&self) -> bool {
        self.called.load(Ordering::Relaxed)
    }

    pub(super) fn add_gate(&self, took: Duration) {
        self.gate_us.fetch_add(micros(took), Ordering::Relaxed);
    }

    pub(super) fn add_visibility(&self, took: Duration) {
        self.visibility_us.fetch_add(micros(took), Ordering::Relaxed);
    }

    /// The parts, once the settlement took `settle`.
    pub(super) fn settled_in(&self, settle: Duration) -> Parts {
        Parts {
            claim: self.claim,
            gate: Duration::from_micros(self.gate_us.load(Ordering::Relaxed)),
            visibility: Duration::from_micros(self.visibility_us.load(Ordering::Relaxed)),
            settle,
        }
    }
}
