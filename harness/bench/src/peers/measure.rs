//! What the method computes from the workers' records: every produced job's completions counted
//! by id (lost, twice), pickup latency (insert to worker start) p50/p95/p99 per window of insert
//! time, whether a rate was sustained, and a fault's recovery time.

use std::collections::HashMap;

use super::process::Record;

/// The records of the jobs `base..base + produced`.
pub(crate) fn of_phase(records: &[Record], base: i64, produced: u64) -> Vec<Record> {
    records.iter().filter(|r| r.id >= base && r.id < base + produced as i64).copied().collect()
}

/// Every produced job's completions, counted by id.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    pub(crate) produced: u64,
    /// Jobs completed at least once.
    pub(crate) completed: u64,
    /// Jobs never completed.
    pub(crate) lost: u64,
    /// Jobs completed more than once.
    pub(crate) twice: u64,
}

impl Tally {
    pub(crate) fn of(phase: &[Record], produced: u64) -> Tally {
        let mut runs: HashMap<i64, u32> = HashMap::with_capacity(phase.len());
        for record in phase {
            *runs.entry(record.id).or_default() += 1;
        }
        let completed = runs.len() as u64;
        let twice = runs.values().filter(|&&n| n > 1).count() as u64;
        Tally { produced, completed, lost: produced.saturating_sub(completed), twice }
    }

    /// Every job exactly once.
    pub(crate) fn exact(&self) -> bool {
        self.lost == 0 && self.twice == 0
    }
}

/// Pickup latency percentiles, milliseconds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pickup {
    pub(crate) p50: f64,
    pub(crate) p95: f64,
    pub(crate) p99: f64,
    pub(crate) jobs: usize,
}

fn percentile(sorted: &[i64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1);
    sorted[i] as f64
}

pub(crate) fn pickup(records: &[Record]) -> Pickup {
    // A job run twice counts its first start.
    let mut first: HashMap<i64, (i64, i64)> = HashMap::with_capacity(records.len());
    for r in records {
        let entry = first.entry(r.id).or_insert((r.at, r.start));
        entry.1 = entry.1.min(r.start);
    }
    percentiles(first.values().map(|(at, start)| (start - at).max(0)).collect())
}

/// p50, p95 and p99 of any milliseconds (a pickup, or one of its parts).
pub(crate) fn percentiles(mut values: Vec<i64>) -> Pickup {
    values.sort_unstable();
    Pickup {
        p50: percentile(&values, 0.50),
        p95: percentile(&values, 0.95),
        p99: percentile(&values, 0.99),
        jobs: values.len(),
    }
}

/// [`pickup`] per window of `window_ms` of insert time, from the phase's first insert.
pub(crate) fn windows(records: &[Record], window_ms: i64) -> Vec<Pickup> {
    let Some(t0) = records.iter().map(|r| r.at).min() else { return Vec::new() };
    let mut by_window: Vec<Vec<Record>> = Vec::new();
    for r in records {
        let w = ((r.at - t0) / window_ms.max(1)) as usize;
        if by_window.len() <= w {
            by_window.resize(w + 1, Vec::new());
        }
        by_window[w].push(*r);
    }
    by_window.iter().filter(|w| !w.is_empty()).map(|w| pickup(w)).collect()
}

/// The worst window: each percentile's highest.
pub(crate) fn worst(windows: &[Pickup]) -> Pickup {
    windows.iter().fold(Pickup::default(), |a, w| Pickup {
        p50: a.p50.max(w.p50),
        p95: a.p95.max(w.p95),
        p99: a.p99.max(w.p99),
        jobs: a.jobs + w.jobs,
    })
}

/// Completions kept pace with the producer: at least 90% of its rate from the first insert to
/// the last completion (a backlog worked off during the drain does not count as keeping up).
pub(crate) fn kept_pace(rate: f64, throughput: f64) -> bool {
    throughput >= 0.9 * rate
}

/// Sustained: completions kept pace ([`kept_pace`]), every job completed by the end of the
/// drain (1% slack), and pickup p99 not growing over the step (its last third's at most twice
/// its first third's, or under 200 ms).
pub(crate) fn sustained(phase: &[Record], tally: &Tally, rate: f64, throughput: f64) -> bool {
    if (tally.completed as f64) < 0.99 * tally.produced as f64 || !kept_pace(rate, throughput) {
        return false;
    }
    let (Some(t0), Some(t1)) = (phase.iter().map(|r| r.at).min(), phase.iter().map(|r| r.at).max()) else {
        return false;
    };
    let third = (t1 - t0) / 3;
    let first: Vec<Record> = phase.iter().filter(|r| r.at < t0 + third).copied().collect();
    let last: Vec<Record> = phase.iter().filter(|r| r.at >= t1 - third).copied().collect();
    let (before, after) = (pickup(&first).p99, pickup(&last).p99);
    after <= (2.0 * before).max(200.0)
}

/// Seconds from the fault until the completion rate is back at the producer's (3-second
/// rolling, at least 90% of `rate`) and stays there until the producer stopped; 0 when it never
/// fell; `None` when it had not come back by then.
pub(crate) fn recovery(phase: &[Record], fault_ms: i64, end_ms: i64, rate: f64) -> Option<f64> {
    let seconds = ((end_ms - fault_ms) / 1000).max(0) as usize;
    if seconds < 3 {
        return None;
    }
    let mut buckets = vec![0u64; seconds];
    for r in phase {
        if r.done >= fault_ms {
            let b = ((r.done - fault_ms) / 1000) as usize;
            if b < seconds {
                buckets[b] += 1;
            }
        }
    }
    let low = |b: usize| (buckets[b..b + 3].iter().sum::<u64>() as f64 / 3.0) < 0.9 * rate;
    match (0..=seconds - 3).rev().find(|&b| low(b)) {
        None => Some(0.0),
        Some(b) if b + 3 >= seconds => None,
        Some(b) => Some((b + 1) as f64),
    }
}
