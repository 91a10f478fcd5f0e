//! `make simulate`, fairness: one application floods the task queue while three quiet ones send a
//! task every 300 ms. Tasks are created, claimed and completed in Postgres with the store's own
//! statements; the queue between them is in-process and hands messages to 16 workers (100 ms of
//! provider time per task) in one of two ways:
//!
//! - oldest first: what a standard queue without message groups amounts to under a backlog;
//! - as an SQS fair queue does with the message group every task message carries
//!   (`aitasks_runtime::queue::message_group`, checked on every send by the deploy rehearsal):
//!   among the groups with visible messages, the one with the fewest messages in flight first.
//!
//! The second is a model of AWS's delivery, not AWS: no local SQS-compatible server reorders
//! by group. What it shows is what tagging each message with its application buys on the
//! deployed stack: a quiet application's task waits for a free worker, not for the noisy
//! backlog. Printed: the quiet applications' latency (create to completed) under both.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_runtime::queue::message_group;
use aitasks_store::{self as store, Claim, Created, PoolSettings};
use aitasks_testkit::percentile;
use serde_json::{json, Value};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::size::Size;
use crate::{db, lifecycle, row, Failure};

const WORKERS: usize = 16;
const SERVICE: Duration = Duration::from_millis(100);
const NOISY: &str = "noisy-app";
const QUIET: [&str; 3] = ["quiet-a", "quiet-b", "quiet-c"];
const QUIET_EVERY: Duration = Duration::from_millis(300);

/// The in-process queue: messages by group, with each group's in-flight count.
struct Queue {
    fair: bool,
    state: Mutex<QueueState>,
    ready: Notify,
}

#[derive(Default)]
struct QueueState {
    next_seq: u64,
    /// Oldest first, across every group (`fair: false`).
    oldest_first: VecDeque<(String, Uuid)>,
    /// Per group, oldest first, with the arrival sequence (`fair: true`).
    by_group: BTreeMap<String, VecDeque<(u64, Uuid)>>,
    in_flight: HashMap<String, usize>,
}

impl Queue {
    fn new(fair: bool) -> Queue {
        Queue { fair, state: Mutex::new(QueueState::default()), ready: Notify::new() }
    }

    fn send(&self, app_id: &str, task_id: Uuid) {
        let group = message_group(app_id);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let seq = state.next_seq;
        state.next_seq += 1;
        if self.fair {
            state.by_group.entry(group).or_default().push_back((seq, task_id));
        } else {
            state.oldest_first.push_back((group, task_id));
        }
        drop(state);
        self.ready.notify_one();
    }

    fn receive(&self) -> Option<(String, Uuid)> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let picked = if self.fair {
            let group = state
                .by_group
                .iter()
                .filter_map(|(group, messages)| messages.front().map(|(seq, _)| (group, *seq)))
                .min_by_key(|(group, seq)| (state.in_flight.get(*group).copied().unwrap_or(0), *seq))
                .map(|(group, _)| group.clone())?;
            let (_, task_id) = state.by_group.get_mut(&group)?.pop_front()?;
            (group, task_id)
        } else {
            state.oldest_first.pop_front()?
        };
        *state.in_flight.entry(picked.0.clone()).or_default() += 1;
        Some(picked)
    }

    fn done(&self, group: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = state.in_flight.get_mut(group) {
            *count = count.saturating_sub(1);
        }
    }
}

struct Outcome {
    quiet_ms: Vec<f64>,
    noisy_done: usize,
    noisy_backlog_at_end: usize,
}

async fn run(base: &str, fair: bool, duration: Duration, flood: usize) -> Result<Outcome, Failure> {
    let url = db::fresh_database(base, "aitasks_fairness").await?;
    let mut settings = PoolSettings::new(&url);
    settings.max_size = WORKERS + 8;
    let pool = store::connect(&settings)?;
    let queue = Arc::new(Queue::new(fair));
    let running = Arc::new(AtomicBool::new(true));
    let created_at: Arc<Mutex<HashMap<Uuid, Instant>>> = Arc::default();
    let quiet_ms: Arc<Mutex<Vec<f64>>> = Arc::default();
    let noisy_done = Arc::new(Mutex::new(0usize));

    let create = |app: &str, key: String| {
        let (pool, queue, created_at) = (pool.clone(), queue.clone(), created_at.clone());
        let app = app.to_owned();
        async move {
            let client = pool.get().await?;
            let Created::New(task) = store::create_task(&client, &lifecycle::new_task(&app, key)).await?
            else {
                return Err::<(), Failure>("a fresh effect key found a task".into());
            };
            created_at.lock().unwrap_or_else(|p| p.into_inner()).insert(task.id, Instant::now());
            queue.send(&app, task.id);
            Ok(())
        }
    };

    // The flood: all at once, before anyone else.
    for i in 0..flood {
        create(NOISY, format!("n{i}")).await?;
    }

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (pool, queue, running) = (pool.clone(), queue.clone(), running.clone());
            let (created_at, quiet_ms, noisy_done) =
                (created_at.clone(), quiet_ms.clone(), noisy_done.clone());
            tokio::spawn(async move {
                let client = pool.get().await?;
                while running.load(Ordering::Relaxed) {
                    let Some((group, id)) = queue.receive() else {
                        let _ = tokio::time::timeout(Duration::from_millis(20), queue.ready.notified()).await;
                        continue;
                    };
                    // The statements process-task runs: a claim of the record's batch (of one
                    // here), and the settler's group commit (of one).
                    if let Some(Claim::Claimed(task)) =
                        store::claim_by(&client, &[id], &aitasks_testkit::claim_mark()).await?.pop()
                    {
                        tokio::time::sleep(SERVICE).await;
                        let output = json!("pos");
                        store::complete_many(&client, &[(task.lease(), &output, None)], true).await?;
                        let started = created_at.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                        if task.app_id == NOISY {
                            *noisy_done.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                        } else if let Some(started) = started {
                            quiet_ms
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(started.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                    queue.done(&group);
                }
                Ok::<(), Failure>(())
            })
        })
        .collect();

    // The quiet applications, while the flood is worked off.
    let until = Instant::now() + duration;
    let mut n = 0;
    while Instant::now() < until {
        for app in QUIET {
            create(app, format!("q{n}")).await?;
        }
        n += 1;
        tokio::time::sleep(QUIET_EVERY).await;
    }
    // Quiet tasks still waiting count with what they waited so far.
    running.store(false, Ordering::Relaxed);
    for worker in workers {
        worker.await??;
    }
    let mut quiet = quiet_ms.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let waiting = created_at.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let client = pool.get().await?;
    let mut noisy_backlog_at_end = 0;
    for (id, started) in waiting {
        let app: String = client.query_one("SELECT app_id FROM tasks WHERE id = $1", &[&id]).await?.get(0);
        if app == NOISY {
            noisy_backlog_at_end += 1;
        } else {
            quiet.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    let noisy_done = *noisy_done.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Outcome { quiet_ms: quiet, noisy_done, noisy_backlog_at_end })
}

pub(crate) async fn section(base: &str, size: Size) -> Result<Value, Failure> {
    let duration = size.pick(Duration::from_secs(12), Duration::from_secs(5), Duration::from_secs(1));
    let flood = size.pick(4_000, 1_500, 50);
    println!(
        "\nfairness: {flood} tasks of one application at once, then three quiet applications send one task \
         each every {} ms for {:.1} s; {WORKERS} workers, {} ms per task",
        QUIET_EVERY.as_millis(),
        duration.as_secs_f64(),
        SERVICE.as_millis()
    );
    row(
        "delivery",
        &["quiet p50 ms", "quiet p99 ms", "quiet max ms", "noisy done", "noisy left"].map(String::from),
    );
    let mut figures = Vec::new();
    for (fair, label) in
        [(false, "oldest first (no message groups)"), (true, "fair queue (a group per application)")]
    {
        let mut outcome = run(base, fair, duration, flood).await?;
        outcome.quiet_ms.sort_by(f64::total_cmp);
        let (p50, p99) = (percentile(&outcome.quiet_ms, 0.50), percentile(&outcome.quiet_ms, 0.99));
        let max = outcome.quiet_ms.last().copied().unwrap_or_default();
        row(
            label,
            &[
                format!("{p50:.0}"),
                format!("{p99:.0}"),
                format!("{max:.0}"),
                outcome.noisy_done.to_string(),
                outcome.noisy_backlog_at_end.to_string(),
            ],
        );
        figures.push(json!({
            "delivery": label, "quietP50Ms": p50, "quietP99Ms": p99, "quietMaxMs": max,
            "quietTasks": outcome.quiet_ms.len(), "noisyDone": outcome.noisy_done,
            "noisyLeft": outcome.noisy_backlog_at_end,
        }));
    }
    Ok(json!({"flood": flood, "workers": WORKERS, "serviceMs": SERVICE.as_millis() as u64, "runs": figures}))
}
