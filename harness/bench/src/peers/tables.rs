//! A system's tables over time, as the method samples them: the dead tuples
//! (`pg_stat_user_tables.n_dead_tup`) and total size (`pg_total_relation_size`) of every table of
//! the system, summed, every two seconds, from a connection of its own (reconnected after a
//! Postgres restart; a sample it could not take is skipped).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the tables are sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(2);

use super::pace::epoch_ms;
use crate::db;

/// (epoch ms, dead tuples, bytes).
pub(crate) type Samples = Arc<Mutex<Vec<(i64, i64, i64)>>>;

pub(crate) struct Sampler {
    pub(crate) samples: Samples,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Sampler {
    pub(crate) fn start(url: String, condition: &'static str) -> Sampler {
        let samples: Samples = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (into, stopped) = (samples.clone(), stop.clone());
        let query = format!(
            "SELECT COALESCE(sum(n_dead_tup), 0)::bigint, COALESCE(sum(pg_total_relation_size(relid)), 0)::bigint \
             FROM pg_stat_user_tables WHERE {condition}"
        );
        let task = tokio::spawn(async move {
            let mut client = None;
            while !stopped.load(Ordering::Relaxed) {
                if client.is_none() {
                    client = db::connect(&url).await.ok();
                }
                if let Some(c) = &client {
                    match c.query_one(&query, &[]).await {
                        Ok(row) => into.lock().unwrap().push((epoch_ms(), row.get(0), row.get(1))),
                        Err(_) => client = None,
                    }
                }
                tokio::time::sleep(SAMPLE_EVERY).await;
            }
        });
        Sampler { samples, stop, task }
    }

    /// The highest dead tuples and bytes between two times.
    pub(crate) fn max_between(&self, from: i64, to: i64) -> (i64, i64) {
        let samples = self.samples.lock().unwrap();
        samples
            .iter()
            .filter(|(t, _, _)| *t >= from && *t <= to)
            .fold((0, 0), |(d, b), (_, dead, bytes)| (d.max(*dead), b.max(*bytes)))
    }

    pub(crate) fn finish(self) -> Vec<(i64, i64, i64)> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.abort();
        self.samples.lock().unwrap().clone()
    }
}
