//! The client-side bound on heartbeat calls: at most `rate` a second, however many are in
//! flight. Step Functions and Lambda throttle their callback APIs per account and region (a
//! token bucket each), and the workflows' own calls draw on the same bucket; staying under the
//! refill rate here means a sweep never spends what they need. Each call takes the next slot,
//! `1 / rate` after the previous one, and waits for it: no burst, so any second holds at most
//! `rate` calls (and one more at its edge).
//!
//! When AWS throttles a call anyway (the workflows took more of the bucket than the rate leaves
//! them), the pace halves, at most once a second and down to a sixteenth of its rate, and wins
//! its rate back a thousandth of it with every accepted call: it settles at what the bucket has
//! left to give instead of spending calls on refusals.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The slowest the pace goes when throttled: its rate divided by this.
const SLOWEST: u32 = 16;
/// At most one halving this often: the calls in flight when the bucket ran dry all come back
/// throttled, and are one signal, not many.
const HALVE_AT_MOST_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(crate) struct Pace {
    /// The rate it was given, calls a second.
    rate: f64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The rate now (at most `rate`).
    now: f64,
    next: Instant,
    halved_at: Option<Instant>,
    /// Counts the halvings: a call that took its slot before one takes another at the new pace.
    halvings: u64,
}

impl Pace {
    /// A pace of `per_second` calls (at least one a minute).
    pub(crate) fn new(per_second: f64) -> Pace {
        let rate = per_second.max(1.0 / 60.0);
        Pace {
            rate,
            state: Mutex::new(State { now: rate, next: Instant::now(), halved_at: None, halvings: 0 }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wait for this call's slot. The calls in flight took theirs at the pace of the moment; when
    /// it halves meanwhile, they take new ones at the slower pace (else up to
    /// `AITASK_CALLBACK_CONCURRENCY` calls would still go out at the old one).
    pub(crate) async fn slot(&self) {
        loop {
            let (at, halvings) = {
                let mut state = self.state();
                let at = state.next.max(Instant::now());
                state.next = at + Duration::from_secs_f64(1.0 / state.now);
                (at, state.halvings)
            };
            tokio::time::sleep_until(at).await;
            if self.state().halvings == halvings {
                return;
            }
        }
    }

    /// AWS throttled a call: halve the rate (once a second at most).
    pub(crate) fn throttled(&self) {
        self.throttled_at(Instant::now());
    }

    fn throttled_at(&self, now: Instant) {
        let mut state = self.state();
        if state.halved_at.is_some_and(|at| now.duration_since(at) < HALVE_AT_MOST_EVERY) {
            return;
        }
        state.halved_at = Some(now);
        state.now = (state.now / 2.0).max(self.rate / f64::from(SLOWEST));
        state.halvings += 1;
        state.next = now + Duration::from_secs_f64(1.0 / state.now);
    }

    /// AWS accepted a call: win back a thousandth of the rate.
    pub(crate) fn accepted(&self) {
        let mut state = self.state();
        state.now = (state.now + self.rate / 1000.0).min(self.rate);
    }

    /// Calls a second, now.
    pub(crate) fn per_second(&self) -> f64 {
        self.state().now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_are_spread_at_the_rate_however_many_wait() {
        let pace = std::sync::Arc::new(Pace::new(200.0));
        let started = Instant::now();
        let calls = (0..100).map(|_| {
            let pace = pace.clone();
            tokio::spawn(async move {
                pace.slot().await;
                Instant::now().duration_since(started)
            })
        });
        let times: Vec<Duration> =
            futures::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
        let early = times.iter().filter(|t| **t < Duration::from_millis(250)).count();
        assert!(early <= 51, "{early} calls in the first quarter second at 200/s: a burst");
        let last = times.iter().max().unwrap();
        assert!(*last >= Duration::from_millis(490), "100 calls at 200/s take half a second, not {last:?}");
    }

    #[tokio::test]
    async fn throttling_halves_the_rate_once_a_second_and_accepted_calls_win_it_back() {
        let pace = Pace::new(400.0);
        pace.throttled();
        pace.throttled();
        assert_eq!(pace.per_second(), 200.0, "the calls throttled together halve it once");
        for _ in 0..100 {
            pace.accepted();
        }
        assert!((pace.per_second() - 240.0).abs() < 1e-6, "{}", pace.per_second());
        for _ in 0..10_000 {
            pace.accepted();
        }
        assert_eq!(pace.per_second(), 400.0, "never above the rate it was given");
    }

    #[tokio::test]
    async fn calls_waiting_for_their_slot_take_new_ones_when_the_pace_halves() {
        let pace = std::sync::Arc::new(Pace::new(100.0));
        let started = Instant::now();
        // Twenty calls take their slots at 100/s: the last at 190 ms.
        let calls: Vec<_> = (0..20)
            .map(|_| {
                let pace = pace.clone();
                tokio::spawn(async move {
                    pace.slot().await;
                    Instant::now().duration_since(started)
                })
            })
            .collect();
        tokio::task::yield_now().await;
        pace.throttled();
        let times: Vec<Duration> =
            futures::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
        let last = times.iter().max().unwrap();
        assert!(*last >= Duration::from_millis(330), "the waiting calls went at 50/s, not 100/s: {last:?}");
    }

    #[test]
    fn a_pace_throttled_again_and_again_stops_at_a_sixteenth() {
        let pace = Pace::new(320.0);
        let start = Instant::now();
        for second in 0..10 {
            pace.throttled_at(start + HALVE_AT_MOST_EVERY * second);
        }
        assert_eq!(pace.per_second(), 20.0);
    }
}
