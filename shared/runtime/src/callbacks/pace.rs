//! The client-side bound on heartbeat calls: at most `rate` a second, however many are in
//! flight. Step Functions and Lambda throttle their callback APIs per account and region (a
//! token bucket each); staying under the refill rate here means a sweep never spends the
//! account's bucket that the workflows' own calls draw on too. Each call takes the next slot,
//! `1 / rate` after the previous one, and waits for it: no burst, so any second holds at most
//! `rate` calls (and one more at its edge).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

#[derive(Debug)]
pub(crate) struct Pace {
    every: Duration,
    next: Mutex<Instant>,
}

impl Pace {
    pub(crate) fn new(per_second: u32) -> Pace {
        Pace { every: Duration::from_secs(1) / per_second.max(1), next: Mutex::new(Instant::now()) }
    }

    /// Wait for this call's slot.
    pub(crate) async fn slot(&self) {
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let at = (*next).max(Instant::now());
            *next = at + self.every;
            at
        };
        tokio::time::sleep_until(at).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_are_spread_at_the_rate_however_many_wait() {
        let pace = std::sync::Arc::new(Pace::new(200));
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
}
