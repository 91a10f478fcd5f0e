//! The producer of this binary's roles, as the method requires (and as `harness/bench/peers-common/pace.mjs`
//! does for the npm peers): `RATE` jobs a second for `SECONDS`, credited on the wall clock, not on
//! loop iterations; every 10 ms the jobs due go out in chunks of `chunk`, at most 8 chunks in
//! flight. Job i is `(SEQ_BASE + i, epoch ms just before its insert)`. A failed chunk (a
//! restarting Postgres) is retried with its first time, for at most `GIVE_UP`: a chunk that cannot
//! go in by then (a broken statement) fails the producer rather than hanging the run.

use std::future::Future;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use crate::Failure;

pub(crate) fn env_f64(name: &str) -> Result<f64, Failure> {
    Ok(std::env::var(name).map_err(|_| format!("{name} is not set"))?.parse()?)
}

pub(crate) fn epoch_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

const IN_FLIGHT: usize = 8;
/// How long a failed chunk is retried, and how often.
const GIVE_UP: Duration = Duration::from_secs(30);
const RETRY_EVERY: Duration = Duration::from_millis(100);
/// How often the jobs due are looked at.
const TICK: Duration = Duration::from_millis(10);

/// Produce as the module says; answers how many jobs went in.
pub(crate) async fn pace<F, Fut>(chunk: usize, insert: F) -> Result<u64, Failure>
where
    F: Fn(Vec<(i64, i64)>) -> Fut,
    Fut: Future<Output = Result<(), Failure>>,
{
    let (rate, seconds) = (env_f64("RATE")?, env_f64("SECONDS")?);
    let base = env_f64("SEQ_BASE").unwrap_or(0.0) as i64;
    let total = (rate * seconds) as i64;
    let started = Instant::now();
    let mut sent = 0i64;
    let mut flying = FuturesUnordered::new();
    while sent < total || !flying.is_empty() {
        let due = total.min((started.elapsed().as_secs_f64() * rate) as i64);
        while sent < due && flying.len() < IN_FLIGHT {
            let n = (chunk as i64).min(due - sent);
            let at = epoch_ms();
            let jobs: Vec<(i64, i64)> = (0..n).map(|i| (base + sent + i, at)).collect();
            let insert = &insert;
            flying.push(async move {
                let until = Instant::now() + GIVE_UP;
                loop {
                    match insert(jobs.clone()).await {
                        Ok(()) => return Ok(()),
                        Err(e) if Instant::now() >= until => {
                            return Err(format!("a chunk failed for {GIVE_UP:?}: {e}"));
                        }
                        Err(e) => {
                            eprintln!("insert failed, retrying: {e}");
                            tokio::time::sleep(RETRY_EVERY).await;
                        }
                    }
                }
            });
            sent += n;
        }
        tokio::select! {
            Some(result) = flying.next(), if !flying.is_empty() => result?,
            () = tokio::time::sleep(TICK) => {}
        }
    }
    Ok(total as u64)
}
