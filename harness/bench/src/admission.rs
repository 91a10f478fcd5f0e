//! Admission: tasks admitted per second with 64 concurrent creators spread over 100 scopes,
//! serialized per scope (this system) and under one global advisory lock (the reference's
//! design), each on a fresh database, with the limits checked afterwards.
//!
//! The baseline is built here, around the store's own admission: each admission first takes one
//! session-wide advisory lock that every creator shares, and gives it back after. The store's
//! per-scope lock is still taken inside it (uncontended then), and the lock costs the baseline
//! two round trips of its own; BENCHMARKS.md says so beside the figures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aitasks_store::{self as store, AdmissionBudget, NewTask, PoolSettings, ScopedAdmission, TaskOwner};
use serde_json::json;

use crate::Failure;

pub(crate) const CLIENTS: usize = 64;

/// How admissions are serialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Serialization {
    /// Per `(app, scope)`: what the system does.
    PerScope,
    /// One advisory lock for every admission, as the reference implementation does.
    Global,
}

/// The key of the baseline's one lock.
const GLOBAL_LOCK: i64 = 7453;
pub(crate) const SCOPES: usize = 100;

fn task(app: &str, scope: &str, effect_key: String) -> NewTask {
    let request = json!({"kind": "classify", "prompt": "p", "input": effect_key, "choices": ["a", "b"]});
    NewTask {
        app_id: app.to_owned(),
        owner: TaskOwner::Application { scope_id: scope.to_owned(), usage_subject: None },
        step_key: "bench".into(),
        effect_key,
        kind: "classify".into(),
        input_hash: "0".repeat(64),
        request,
        model_id: "default".into(),
        model_ref: None,
        model_config_hash: Some("0".repeat(64)),
        max_attempts: 3,
        trace_header: None,
        deferred_window_ms: None,
        awaiting_batch: false,
        has_poller: false,
        scope_terms: None,
        replay_of: None,
        replay_operation: None,
    }
}

/// Admissions per second over `duration`, and whether the counts still add up.
pub(crate) async fn run(
    url: &str,
    serialization: Serialization,
    duration: Duration,
    clients: usize,
) -> Result<(f64, bool, u64), Failure> {
    let mut settings = PoolSettings::new(url);
    settings.max_size = clients;
    let pool = store::connect(&settings)?;
    let budget = AdmissionBudget {
        burst: 1_000_000_000,
        tasks_per_minute: 1_000_000_000,
        max_steps_per_source: 1_000_000_000,
        sources_per_24_hours: 1_000_000_000,
        scope_concurrent: 1_000_000_000,
        global_concurrent: 1_000_000_000,
    };
    let admitted = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + duration;
    let workers = (0..clients).map(|client_index| {
        let (pool, admitted) = (pool.clone(), admitted.clone());
        tokio::spawn(async move {
            let mut client = pool.get().await?;
            let mut n = 0usize;
            // At least one admission a client, however short the run.
            while n == 0 || Instant::now() < until {
                let scope = format!("scope-{}", (client_index * 7 + n) % SCOPES);
                let key = format!("{client_index}-{n}");
                let admission = ScopedAdmission {
                    source_id: format!("source-{}", n % 10),
                    cache_key: format!("{:064x}", client_index * 1_000_000 + n),
                    recompute: false,
                    budget,
                    limits: aitasks_store::ServerLimits::default(),
                };
                if serialization == Serialization::Global {
                    client.execute("SELECT pg_advisory_lock($1)", &[&GLOBAL_LOCK]).await?;
                }
                let admitted_here =
                    store::create_scoped(&mut client, &task("bench-app", &scope, key), &admission).await;
                if serialization == Serialization::Global {
                    client.execute("SELECT pg_advisory_unlock($1)", &[&GLOBAL_LOCK]).await?;
                }
                admitted_here?;
                admitted.fetch_add(1, Ordering::Relaxed);
                n += 1;
            }
            Ok::<(), Failure>(())
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let count = admitted.load(Ordering::Relaxed);
    let client = pool.get().await?;
    let rows: i64 = client.query_one("SELECT count(*) FROM tasks", &[]).await?.get(0);
    let history: i64 = client.query_one("SELECT count(*) FROM scope_admissions", &[]).await?.get(0);
    let counter: i64 =
        client.query_one("SELECT COALESCE(sum(active), 0)::bigint FROM app_concurrency", &[]).await?.get(0);
    let exact = rows as u64 == count && history as u64 == count && counter as u64 == count;
    Ok((count as f64 / seconds, exact, count))
}
