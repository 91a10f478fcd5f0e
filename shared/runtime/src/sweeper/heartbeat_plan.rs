//! The heartbeat duty's arithmetic (docs/lifecycle.md, "Heartbeat capacity"): how fast to call
//! so a sweep's heartbeats spread over its window instead of coming in a burst, and which
//! `HeartbeatSeconds` the stack keeps with the callbacks that wait, which the sweep reports.

use std::time::Duration;

/// The slowest spread pace: a handful of waiting callbacks are done in a second or two rather
/// than one every few seconds across the window.
const SLOWEST_SPREAD: f64 = 10.0;
/// The part of the window the spread aims to fill: the rest is room for calls AWS throttled
/// (due again at once) and for callbacks that come due during the window.
const SPREAD_OVER: f64 = 0.8;
/// However far behind the capacity is, the figure stops at a day of sweeps.
const MOST_CYCLES: u64 = 1_440;

/// Calls a second for `waiting` callbacks in a window of `window`: even over most of the window,
/// never more than `most` (the configured rate), nor fewer than [`SLOWEST_SPREAD`].
pub(super) fn spread_rate(waiting: u64, window: Duration, most: u32) -> f64 {
    let most = f64::from(most.max(1));
    let even = waiting as f64 / (window.as_secs_f64() * SPREAD_OVER).max(0.001);
    even.clamp(SLOWEST_SPREAD.min(most), most)
}

/// The longest a waiting callback may go without a heartbeat, which a state's `HeartbeatSeconds`
/// must exceed; from one sweep's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keeping {
    /// The heartbeat interval (`AITASK_CALLBACK_HEARTBEAT_MS`): a callback is due once its last
    /// heartbeat is this old.
    pub(super) every: Duration,
    /// The schedule's period (`AITASK_SWEEP_INTERVAL_MS`).
    pub(super) interval: Duration,
    /// The duty's window (`RuntimeConfig::heartbeat_window`).
    pub(super) window: Duration,
}

impl Keeping {
    /// With every due callback heartbeated in its sweep: a callback comes due `every` after its
    /// last heartbeat, and the window that takes it ends at most one period after that (it
    /// came due just after a window ended) or, taken late in its window, at most `window`
    /// after it came due: `every` plus the longer of the two.
    pub(super) fn when_caught_up(&self) -> Duration {
        self.every + self.interval.max(self.window)
    }

    /// With the capacity short, so the sweep stopped with callbacks still due: the sweep sent
    /// `sent`, shared in turns between the tenants, whose waiting callbacks are `waiting`. Each
    /// tenant gets an equal share, or all of its own when that is less (the turns); the tenant
    /// with the most waiting is heartbeated once in as many sweeps as its share goes into its
    /// count, at offsets in the window up to `window` apart, and comes due `every` after.
    pub(super) fn when_short(&self, waiting: &[u64], sent: u64) -> Duration {
        let most = waiting.iter().copied().max().unwrap_or(0);
        let cycles = match fair_share(waiting, sent) {
            0 => MOST_CYCLES,
            share => most.div_ceil(share).clamp(1, MOST_CYCLES),
        };
        self.interval * u32::try_from(cycles).unwrap_or(u32::MAX) + self.every.max(self.window)
    }
}

/// What each tenant gets of `sent` heartbeats a sweep when they are shared in turns: an equal
/// share, except that a tenant with fewer waiting gets all of its own and leaves the rest to
/// the others (max-min fairness). The share of the tenants that do not get all of theirs.
fn fair_share(waiting: &[u64], sent: u64) -> u64 {
    let mut counts: Vec<u64> = waiting.iter().copied().filter(|n| *n > 0).collect();
    counts.sort_unstable();
    let mut left = sent;
    for (served, count) in counts.iter().enumerate() {
        let share = left / (counts.len() - served) as u64;
        if *count > share {
            return share;
        }
        left -= count;
    }
    // Every tenant got all of its own: the largest count is a share.
    counts.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn defaults() -> Keeping {
        Keeping { every: 45 * SECOND, interval: 60 * SECOND, window: 45 * SECOND }
    }

    #[test]
    fn the_spread_fills_most_of_the_window_within_the_rate() {
        let window = 45 * SECOND;
        assert!((spread_rate(9_000, window, 400) - 250.0).abs() < 1e-6, "9,000 over 36 s");
        assert_eq!(spread_rate(100_000, window, 400), 400.0, "never past the rate");
        assert_eq!(spread_rate(3, window, 400), 10.0, "a few are done at once");
        assert_eq!(spread_rate(3, window, 4), 4.0, "and never past a rate below the slowest spread");
        assert_eq!(spread_rate(100, Duration::ZERO, 250), 250.0, "a zero window calls at the rate");
    }

    #[test]
    fn caught_up_the_stack_keeps_a_state_of_105_seconds_at_the_defaults() {
        assert_eq!(defaults().when_caught_up(), 105 * SECOND);
    }

    #[test]
    fn short_of_capacity_the_tenant_with_the_most_waiting_sets_the_figure() {
        let keeping = defaults();
        // 100,000 waiting across ten equal tenants, 18,000 sent a sweep (400/s over 45 s): each
        // tenant's share is 1,800 of its 10,000, so each is heartbeated once in six sweeps.
        assert_eq!(keeping.when_short(&[10_000; 10], 18_000), (6 * 60 + 45) * SECOND);
        // One tenant with 90,000 and ten with 1,000: the small ones get all theirs (10,000), the
        // big one the other 8,000: once in twelve sweeps.
        let mut skewed = vec![1_000; 10];
        skewed.push(90_000);
        assert_eq!(keeping.when_short(&skewed, 18_000), (12 * 60 + 45) * SECOND);
        assert_eq!(keeping.when_short(&[5_000], 0), (1_440 * 60 + 45) * SECOND, "nothing sent: a day");
    }

    /// docs/lifecycle.md's table of the figure by waiting count and region is this arithmetic at
    /// the defaults (each region's default rate over the 45 s window, tenants alike).
    #[test]
    fn the_documented_table_is_what_the_sweep_says() {
        let docs = include_str!("../../../../docs/lifecycle.md");
        let table = docs.split("| waiting callbacks |").nth(1).expect("the table");
        let rows: Vec<Vec<u64>> = table
            .lines()
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| {
                line.split('|')
                    .filter(|cell| !cell.trim().is_empty())
                    .map(|cell| cell.trim().replace(',', "").parse().expect("a number"))
                    .collect()
            })
            .collect();
        assert!(rows.len() >= 6, "{rows:?}");
        let keeping = defaults();
        for row in rows {
            let [waiting, large, other] = row[..] else { panic!("{row:?}") };
            for (rate, documented) in [(400, large), (250, other)] {
                let per_sweep = rate * 45;
                let kept = if waiting <= per_sweep {
                    keeping.when_caught_up()
                } else {
                    keeping.when_short(&[waiting], per_sweep)
                };
                assert_eq!(kept.as_secs(), documented, "{waiting} waiting at {rate}/s");
            }
        }
    }

    #[test]
    fn the_fair_share_is_max_min() {
        assert_eq!(fair_share(&[10, 10, 10], 30), 10);
        assert_eq!(fair_share(&[5, 100, 100], 105), 50);
        assert_eq!(fair_share(&[5, 100, 100], 1_000), 100, "everyone served");
        assert_eq!(fair_share(&[], 100), 0);
    }
}
