//! Batches against one task at a time, on the same database in the same run:
//!
//! - creates at 64 clients: `create_task` + `mark_sent` per task (what the single create writes)
//!   beside `create_tasks` + `mark_sent_many` for 100 at a time, and the floor of one plain
//!   INSERT a task (pgbench);
//! - the lifecycle with batches of 10 (create, claim, heartbeat each, complete with events) beside
//!   the three-statement floor of `floor.sql`;
//! - statements a task in a batch of 10, counted by `pg_stat_statements`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aitasks_store::{self as store, Claim, Fenced, PoolSettings};
use serde_json::{json, Value};

use crate::lifecycle::new_task;
use crate::{db, pgbench, row, Failure};

const CLIENTS: usize = 64;
const CREATE_BATCH: usize = 100;
const LIFECYCLE_BATCH: usize = 10;

pub(crate) const CREATE_FLOOR: &str = include_str!("../sql/create_floor.sql");

/// Run `work` on `CLIENTS` clients for `duration`; each call returns how many tasks it did.
async fn throughput<F, Fut>(url: &str, duration: Duration, work: F) -> Result<f64, Failure>
where
    F: Fn(store::Client, usize) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(store::Client, u64), Failure>> + Send,
{
    let mut settings = PoolSettings::new(url);
    settings.max_size = CLIENTS;
    let pool = store::connect(&settings)?;
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + duration;
    let workers = (0..CLIENTS).map(|c| {
        let (pool, done, work) = (pool.clone(), done.clone(), work.clone());
        tokio::spawn(async move {
            let mut client = pool.get().await?;
            let mut round = 0;
            while Instant::now() < until {
                let (back, n) = work(client, c * 1_000_000 + round).await?;
                client = back;
                done.fetch_add(n, Ordering::Relaxed);
                round += 1;
            }
            Ok::<(), Failure>(())
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

async fn single_create(client: store::Client, round: usize) -> Result<(store::Client, u64), Failure> {
    let created = store::create_task(&client, &new_task("bench-app", format!("s-{round}"))).await?;
    store::mark_sent(&client, created.task().id).await?;
    Ok((client, 1))
}

async fn batch_create(client: store::Client, round: usize) -> Result<(store::Client, u64), Failure> {
    let tasks: Vec<_> = (0..CREATE_BATCH).map(|i| new_task("bench-app", format!("b-{round}-{i}"))).collect();
    let ids = created_ids(store::create_tasks(&client, "bench-app", &tasks).await?)?;
    store::mark_sent_many(&client, &ids).await?;
    Ok((client, ids.len() as u64))
}

fn created_ids(answers: Vec<store::StoreResult<store::Created>>) -> Result<Vec<uuid::Uuid>, Failure> {
    answers.into_iter().map(|a| Ok(a?.task().id)).collect()
}

/// Ten tasks through their whole life: one create, one claim, a heartbeat each (every attempt
/// keeps its own lease), one complete with the ten events.
pub(crate) async fn batch_lifecycle(
    client: store::Client,
    round: usize,
) -> Result<(store::Client, u64), Failure> {
    let tasks: Vec<_> =
        (0..LIFECYCLE_BATCH).map(|i| new_task("bench-app", format!("l-{round}-{i}"))).collect();
    let ids = created_ids(store::create_tasks(&client, "bench-app", &tasks).await?)?;
    let mut claimed = Vec::with_capacity(ids.len());
    for claim in store::claim(&client, &ids).await? {
        let Claim::Claimed(task) = claim else { return Err("a fresh task could not be claimed".into()) };
        claimed.push(task);
    }
    for task in &claimed {
        store::heartbeat(&client, task.lease()).await?;
    }
    let (output, usage) = (json!("pos"), json!({"inputTokens": 11, "outputTokens": 7}));
    let attempts: Vec<_> = claimed.iter().map(|t| (t.lease(), &output, Some(&usage))).collect();
    let settled = store::complete_many(&client, &attempts).await?;
    if settled.iter().any(|s| matches!(s, Fenced::Lost)) {
        return Err("a held lease was lost".into());
    }
    Ok((client, claimed.len() as u64))
}

pub(crate) async fn section(base: &str, quick: bool, out: &std::path::Path) -> Result<Value, Failure> {
    let duration = if quick { Duration::from_secs(3) } else { Duration::from_secs(10) };
    let url = db::fresh_database(base, "aitasks_bench_batches").await?;
    let create_floor_script = pgbench::script_file(out, "create_floor.sql", CREATE_FLOOR)?;
    let floor_script = pgbench::script_file(out, "floor.sql", pgbench::FLOOR)?;
    println!("\nbatches: tasks/s at {CLIENTS} clients, {}s per point", duration.as_secs());

    db::reset_tasks(&url).await?;
    let single = throughput(&url, duration, single_create).await?;
    db::reset_tasks(&url).await?;
    let batched = throughput(&url, duration, batch_create).await?;
    db::reset_tasks(&url).await?;
    let create_floor = pgbench::run(&url, &create_floor_script, CLIENTS, pgbench::Limit::Duration(duration))?;
    row("", &["tasks/s".into(), "× single".into(), "× floor".into()]);
    row(
        "create one at a time (create + mark sent)",
        &[format!("{single:.0}"), "1.00x".into(), format!("{:.2}x", single / create_floor)],
    );
    row(
        &format!("create {CREATE_BATCH} a call (targets ≥ 5x, ≥ 2x)"),
        &[
            format!("{batched:.0}"),
            format!("{:.2}x", batched / single),
            format!("{:.2}x", batched / create_floor),
        ],
    );
    row(
        "floor: one plain INSERT a task (pgbench)",
        &[format!("{create_floor:.0}"), format!("{:.2}x", create_floor / single), "1.00x".into()],
    );

    db::reset_tasks(&url).await?;
    let lifecycle = throughput(&url, duration, batch_lifecycle).await?;
    db::reset_tasks(&url).await?;
    let floor = pgbench::run(&url, &floor_script, CLIENTS, pgbench::Limit::Duration(duration))?;
    row(
        &format!("lifecycle in batches of {LIFECYCLE_BATCH} (target ≥ 1.5x floor)"),
        &[format!("{lifecycle:.0}"), String::new(), format!("{:.2}x", lifecycle / floor)],
    );
    row(
        "floor: 3 plain statements a task (pgbench)",
        &[format!("{floor:.0}"), String::new(), "1.00x".into()],
    );

    let per_task = statements_per_task(&url).await?;
    println!(
        "statements a task in a batch of {LIFECYCLE_BATCH} (target ≤ 1.5): {:.2} with a heartbeat each, {:.2} without (worker path: claim, complete + events, publish mark); one at a time: 3",
        per_task.0, per_task.1
    );
    Ok(json!({
        "clients": CLIENTS, "seconds": duration.as_secs(),
        "create": {"single": single, "batched": batched, "batchSize": CREATE_BATCH, "floor": create_floor,
                   "ratioToSingle": batched / single, "ratioToFloor": batched / create_floor},
        "lifecycle": {"batched": lifecycle, "batchSize": LIFECYCLE_BATCH, "floor": floor, "ratioToFloor": lifecycle / floor},
        "statementsPerTask": {"withHeartbeats": per_task.0, "workerPath": per_task.1},
    }))
}

/// Statements a task for batches of ten: the lifecycle above, and the worker's path (claim,
/// complete with events, the events' delivered mark; no heartbeat for a prompt answer).
async fn statements_per_task(url: &str) -> Result<(f64, f64), Failure> {
    let name = "aitasks_bench_batches";
    let mut settings = PoolSettings::new(url);
    settings.max_size = 1;
    let pool = store::connect(&settings)?;
    let client = pool.get().await?;
    let (client, _) = batch_lifecycle(client, 9_000_000).await?; // warm the statement cache
    db::reset_statements(url, name).await?;
    let (client, n) = batch_lifecycle(client, 9_000_001).await?;
    let with_heartbeats = db::statements_seen(url, name).await? as f64 / n as f64;

    let tasks: Vec<_> = (0..LIFECYCLE_BATCH).map(|i| new_task("bench-app", format!("w-{i}"))).collect();
    let ids = created_ids(store::create_tasks(&client, "bench-app", &tasks).await?)?;
    db::reset_statements(url, name).await?;
    let mut claimed = Vec::new();
    for claim in store::claim(&client, &ids).await? {
        if let Claim::Claimed(task) = claim {
            claimed.push(task);
        }
    }
    let output = json!("pos");
    let attempts: Vec<_> = claimed.iter().map(|t| (t.lease(), &output, None)).collect();
    let events: Vec<i64> = store::complete_many(&client, &attempts)
        .await?
        .into_iter()
        .filter_map(|s| match s {
            Fenced::Written(event) => Some(event.id),
            Fenced::Lost => None,
        })
        .collect();
    store::mark_delivered(&client, &events).await?;
    let worker = db::statements_seen(url, name).await? as f64 / claimed.len().max(1) as f64;
    Ok((with_heartbeats, worker))
}
