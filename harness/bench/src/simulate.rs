//! `make simulate`: many scopes with skewed traffic against local Postgres. 10,000 scopes of one
//! application, a few of them hot (the scope of each create is drawn as 10,000 · u³). Creators
//! go through scoped admission, workers take the admitted tasks from an in-process queue (as
//! SQS would hand them out) and claim, work and complete them. A monitor checks, while they
//! run, that no scope has more active tasks than its cap and the application no more than its
//! own. Concurrency grows until throughput stops growing; then the same runs again with
//! heartbeats and the sweeper's duties switched on.
//!
//! It prints throughput, p99 create latency, the admission outcomes, and the admission rate of
//! the cold scopes (at most two requests) beside the ten hottest. A cold scope stays within its
//! own budget, so it can only be refused when the whole application is at its cap, and never
//! more often than the hot ones: no scope starves another.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_store::{
    self as store, AdmissionBudget, Claim, PoolSettings, ScopedAdmission, StoreError, TaskOwner,
};
use aitasks_testkit::{percentile, Xorshift};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::size::Size;
use crate::{db, lifecycle, row, Failure};

const SCOPES: u64 = 10_000;
const APP: &str = "sim-app";
const BUDGET: AdmissionBudget = AdmissionBudget {
    burst: 20,
    tasks_per_minute: 600,
    max_steps_per_source: 1_000_000,
    sources_per_24_hours: 1_000_000,
    scope_concurrent: 3,
    // Above max_connections - 1 (299 locally): both application lock modes are exercised.
    global_concurrent: 400,
};

#[derive(Default)]
struct Tally {
    latencies_ms: Vec<f64>,
    outcomes: HashMap<&'static str, u64>,
    /// Per scope: (requests, admitted).
    per_scope: HashMap<u64, (u64, u64)>,
}

struct Point {
    per_second: f64,
    admitted_per_second: f64,
    p99_ms: f64,
    cold_rate: f64,
    hot_rate: f64,
    peak_scope: i64,
    peak_app: i64,
    outcomes: HashMap<&'static str, u64>,
}

async fn run_point(
    base: &str,
    creators: usize,
    duration: Duration,
    background: bool,
    seed: u64,
) -> Result<Point, Failure> {
    let url = db::fresh_database(base, "aitasks_simulate").await?;
    let mut settings = PoolSettings::new(&url);
    settings.max_size = creators.min(160);
    let pool = store::connect(&settings)?;
    let mut worker_settings = PoolSettings::new(&url);
    worker_settings.max_size = 48;
    let worker_pool = store::connect(&worker_settings)?;
    let (queue, receiver) = mpsc::unbounded_channel::<uuid::Uuid>();
    let receiver = Arc::new(tokio::sync::Mutex::new(receiver));
    let running = Arc::new(AtomicBool::new(true));
    let tally = Arc::new(Mutex::new(Tally::default()));

    // Workers: claim, work 20 ms (300 ms with heartbeats every 100 ms), complete.
    let workers: Vec<_> = (0..48)
        .map(|_| {
            let (pool, receiver, running) = (worker_pool.clone(), receiver.clone(), running.clone());
            tokio::spawn(async move {
                let client = pool.get().await?;
                while running.load(Ordering::Relaxed) {
                    let next =
                        tokio::time::timeout(Duration::from_millis(100), receiver.lock().await.recv()).await;
                    let Ok(Some(id)) = next else { continue };
                    // A batch of one, as process-task claims it; the tasks are scoped, so each
                    // completes with its own statement (admission bookkeeping), as it ships.
                    let Some(Claim::Claimed(task)) =
                        store::claim_by(&client, &[id], &aitasks_testkit::claim_mark()).await?.pop()
                    else {
                        continue;
                    };
                    if background {
                        for _ in 0..3 {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            store::heartbeat(&client, task.lease()).await?;
                        }
                    } else {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    store::complete_attempt(&client, task.lease(), &json!("pos"), None, true).await?;
                }
                Ok::<(), Failure>(())
            })
        })
        .collect();

    // The sweeper's duties, every 500 ms, when background load is on.
    let sweeper = background.then(|| {
        let (pool, running) = (worker_pool.clone(), running.clone());
        tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                if let Ok(client) = pool.get().await {
                    let _ = store::expire_queued(&client, Duration::from_secs(900), 100).await;
                    let runtime = aitasks_runtime::RuntimeConfig::default();
                    if let Ok(stale) = store::take_stale_running(&client, runtime.stale_running, 100).await {
                        let decided: Vec<_> = stale
                            .iter()
                            .filter_map(|attempt| {
                                let (ending, _delay) =
                                    aitasks_runtime::sweeper::stale_ending(attempt, &runtime)?;
                                Some((attempt.lease, ending))
                            })
                            .collect();
                        let _ = store::expire_running(&client, runtime.stale_running, &decided).await;
                    }
                    let _ =
                        store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(300), 100)
                            .await;
                    let _ = store::take_undelivered_events(&client, Duration::from_secs(30), 100).await;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })
    });

    // The monitor: peak active per scope and for the application, sampled while creators run.
    let (peak_scope, peak_app) = (Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0)));
    let monitor = {
        let (url, running, peak_scope, peak_app) =
            (url.clone(), running.clone(), peak_scope.clone(), peak_app.clone());
        tokio::spawn(async move {
            let client = db::connect(&url).await?;
            while running.load(Ordering::Relaxed) {
                let row = client
                    .query_one(
                        "SELECT COALESCE(max(n), 0)::bigint, COALESCE(sum(n), 0)::bigint FROM (SELECT count(*) AS n \
                         FROM tasks WHERE status IN ('queued', 'running') GROUP BY scope_id) s",
                        &[],
                    )
                    .await?;
                peak_scope.fetch_max(row.get(0), Ordering::Relaxed);
                peak_app.fetch_max(row.get(1), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok::<(), Failure>(())
        })
    };

    let started = Instant::now();
    let until = started + duration;
    let creator_tasks: Vec<_> = (0..creators)
        .map(|c| {
            let (pool, queue, tally) = (pool.clone(), queue.clone(), tally.clone());
            tokio::spawn(async move {
                let mut random = Xorshift::new(seed ^ (c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut n = 0u64;
                while Instant::now() < until {
                    let scope = (SCOPES as f64 * random.unit().powi(3)) as u64;
                    let mut task = lifecycle::new_task(APP, format!("{c}-{n}"));
                    task.owner =
                        TaskOwner::Application { scope_id: format!("scope-{scope}"), usage_subject: None };
                    let admission = ScopedAdmission {
                        source_id: format!("doc-{}", n % 5),
                        cache_key: format!("{:064x}", (c as u64) << 32 | n),
                        recompute: false,
                        budget: BUDGET,
                        limits: aitasks_store::ServerLimits::default(),
                    };
                    let at = Instant::now();
                    let mut client = pool.get().await?;
                    let result = store::create_scoped(&mut client, &task, &admission).await;
                    drop(client);
                    let ms = at.elapsed().as_secs_f64() * 1000.0;
                    let outcome = match &result {
                        Ok(created) => {
                            let _ = queue.send(created.created.task().id);
                            "admitted"
                        }
                        Err(StoreError::Admission(refusal)) => refusal.code().as_str(),
                        Err(other) => return Err(format!("create failed: {other}").into()),
                    };
                    let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
                    tally.latencies_ms.push(ms);
                    *tally.outcomes.entry(outcome).or_default() += 1;
                    let entry = tally.per_scope.entry(scope).or_default();
                    entry.0 += 1;
                    entry.1 += u64::from(outcome == "admitted");
                    n += 1;
                }
                Ok::<(), Failure>(())
            })
        })
        .collect();
    for creator in futures::future::join_all(creator_tasks).await {
        creator??;
    }
    let seconds = started.elapsed().as_secs_f64();
    running.store(false, Ordering::Relaxed);
    for worker in futures::future::join_all(workers).await {
        worker??;
    }
    monitor.await??;
    if let Some(sweeper) = sweeper {
        sweeper.await?;
    }

    let mut tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|p| p.into_inner()));
    tally.latencies_ms.sort_by(f64::total_cmp);
    let total = tally.latencies_ms.len();
    let p99 = percentile(&tally.latencies_ms, 0.99);
    let admitted = tally.outcomes.get("admitted").copied().unwrap_or(0);
    // Cold: scopes that asked at most twice (well within burst and caps). Hot: the 10 busiest.
    let (mut cold_requests, mut cold_admitted) = (0u64, 0u64);
    for (requests, ok) in tally.per_scope.values() {
        if *requests <= 2 {
            cold_requests += requests;
            cold_admitted += ok;
        }
    }
    let mut busiest: Vec<&(u64, u64)> = tally.per_scope.values().collect();
    busiest.sort_by_key(|(requests, _)| std::cmp::Reverse(*requests));
    let (hot_requests, hot_admitted) =
        busiest.iter().take(10).fold((0u64, 0u64), |(r, a), (requests, ok)| (r + requests, a + ok));
    Ok(Point {
        per_second: total as f64 / seconds,
        admitted_per_second: admitted as f64 / seconds,
        p99_ms: p99,
        cold_rate: cold_admitted as f64 / cold_requests.max(1) as f64,
        hot_rate: hot_admitted as f64 / hot_requests.max(1) as f64,
        peak_scope: peak_scope.load(Ordering::Relaxed),
        peak_app: peak_app.load(Ordering::Relaxed),
        outcomes: tally.outcomes,
    })
}

pub(crate) async fn section(base: &str, size: Size) -> Result<Value, Failure> {
    let duration = size.point(10, 4);
    let levels: &[usize] = size.pick::<&[usize]>(&[16, 64, 256, 1024, 2048], &[16, 256], &[4]);
    let mut report = Vec::new();
    let mut violations = Vec::new();
    for background in [false, true] {
        println!(
            "\nsimulate: {SCOPES} scopes, skewed traffic, 48 workers{}; {:.1}s per point; caps: scope {}, application {}",
            if background { ", heartbeats every 100 ms and the sweeper every 500 ms" } else { "" },
            duration.as_secs_f64(),
            BUDGET.scope_concurrent,
            BUDGET.global_concurrent
        );
        row(
            "creators",
            &["creates/s", "admitted/s", "p99 ms", "cold ok", "hot ok", "peak scope", "peak app"]
                .map(String::from),
        );
        let mut best = 0.0f64;
        for (i, &creators) in levels.iter().enumerate() {
            let point = run_point(base, creators, duration, background, 0x5eed + i as u64).await?;
            row(
                &creators.to_string(),
                &[
                    format!("{:.0}", point.per_second),
                    format!("{:.0}", point.admitted_per_second),
                    format!("{:.1}", point.p99_ms),
                    format!("{:.0}%", point.cold_rate * 100.0),
                    format!("{:.0}%", point.hot_rate * 100.0),
                    point.peak_scope.to_string(),
                    point.peak_app.to_string(),
                ],
            );
            if point.peak_scope > BUDGET.scope_concurrent || point.peak_app > BUDGET.global_concurrent {
                violations.push(format!(
                    "{creators} creators: peak scope {}, peak app {}",
                    point.peak_scope, point.peak_app
                ));
            }
            // A cold scope may be refused only as often as the busiest ones (when the application
            // as a whole is at its cap); anything worse is one scope starving another.
            if point.cold_rate + 0.01 < point.hot_rate {
                violations.push(format!(
                    "{creators} creators: cold scopes admitted {:.1}%, hot {:.1}%",
                    point.cold_rate * 100.0,
                    point.hot_rate * 100.0
                ));
            }
            let stopped_scaling = point.per_second < best * 1.05;
            best = best.max(point.per_second);
            let mut outcomes: Vec<_> = point.outcomes.iter().collect();
            outcomes.sort();
            report.push(json!({"creators": creators, "background": background, "createsPerSecond": point.per_second,
                "admittedPerSecond": point.admitted_per_second, "p99Ms": point.p99_ms, "coldAdmitted": point.cold_rate,
                "hotAdmitted": point.hot_rate, "peakScopeActive": point.peak_scope, "peakAppActive": point.peak_app,
                "outcomes": outcomes}));
            if stopped_scaling && i >= 2 && i + 1 < levels.len() {
                println!("  (throughput stopped growing at {creators} creators)");
                break;
            }
        }
    }
    if !violations.is_empty() {
        return Err(format!("limits broken or a scope starved: {violations:?}").into());
    }
    println!("limits held at every point; cold scopes were never admitted less often than the hottest");
    Ok(Value::Array(report))
}
