//! `make bench`: benchmarks whose figures are printed side by side with their comparison,
//! measured in the same run against the same Postgres, and written to
//! `target/bench/latest.json`. `BENCH_QUICK=1` shortens every run.
//!
//! Admission: tasks admitted per second with 64 concurrent creators spread over 100 scopes,
//! serialized per scope (this system) and under one global advisory lock (the reference's
//! design), each on a fresh database, with the limits checked afterwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aitasks_store::{
    self as store, AdmissionBudget, NewTask, PoolSettings, ScopedAdmission, Serialization, TaskOwner,
};
use serde_json::{json, Value};
use tokio_postgres::NoTls;

type Failure = Box<dyn std::error::Error + Send + Sync>;

const CLIENTS: usize = 64;
const SCOPES: usize = 100;

fn with_database(url: &str, database: &str) -> String {
    let (server, _) = url.rsplit_once('/').unwrap_or((url, ""));
    format!("{server}/{database}")
}

async fn fresh_database(base: &str, name: &str) -> Result<String, Failure> {
    let (admin, connection) = tokio_postgres::connect(&with_database(base, "postgres"), NoTls).await?;
    tokio::spawn(connection);
    // Two calls: DROP DATABASE may not share a (implicit) transaction with anything.
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    admin.batch_execute(&format!("CREATE DATABASE {name}")).await?;
    let url = with_database(base, name);
    store::migrate(&url).await?;
    Ok(url)
}

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
    }
}

/// Admissions per second over `duration`, and whether the counts still add up.
async fn admission_run(
    url: &str,
    serialization: Serialization,
    duration: Duration,
) -> Result<(f64, bool, u64), Failure> {
    let mut settings = PoolSettings::new(url);
    settings.max_size = CLIENTS;
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
    let workers = (0..CLIENTS).map(|client_index| {
        let (pool, admitted) = (pool.clone(), admitted.clone());
        tokio::spawn(async move {
            let mut client = pool.get().await?;
            let mut n = 0usize;
            while Instant::now() < until {
                let scope = format!("scope-{}", (client_index * 7 + n) % SCOPES);
                let key = format!("{client_index}-{n}");
                let admission = ScopedAdmission {
                    source_id: format!("source-{}", n % 10),
                    cache_key: format!("{:064x}", client_index * 1_000_000 + n),
                    recompute: false,
                    budget,
                };
                store::create_scoped_with(
                    &mut client,
                    &task("bench-app", &scope, key),
                    &admission,
                    serialization,
                )
                .await?;
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

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let base = std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL is required (make bench sets it)")?;
    let quick = std::env::var("BENCH_QUICK").is_ok_and(|v| v == "1");
    let duration = if quick { Duration::from_secs(3) } else { Duration::from_secs(15) };

    println!(
        "admission: {CLIENTS} concurrent creators over {SCOPES} scopes, {}s per run",
        duration.as_secs()
    );
    let url = fresh_database(&base, "aitasks_bench_per_scope").await?;
    let (per_scope, per_scope_exact, per_scope_n) =
        admission_run(&url, Serialization::PerScope, duration).await?;
    let url = fresh_database(&base, "aitasks_bench_global").await?;
    let (global, global_exact, global_n) = admission_run(&url, Serialization::Global, duration).await?;
    let ratio = per_scope / global;
    println!("{:<44} {:>12} {:>10}", "", "tasks/s", "limits");
    println!(
        "{:<44} {:>12.0} {:>10}",
        "per-scope serialization (this system)",
        per_scope,
        if per_scope_exact { "exact" } else { "BROKEN" }
    );
    println!(
        "{:<44} {:>12.0} {:>10}",
        "one global advisory lock (reference design)",
        global,
        if global_exact { "exact" } else { "BROKEN" }
    );
    println!("{:<44} {:>12.2}x   (target: at least 4x)", "ratio", ratio);

    let report: Value = json!({
        "machine": {"cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)},
        "quick": quick,
        "admission": {
            "clients": CLIENTS, "scopes": SCOPES, "seconds": duration.as_secs(),
            "perScope": {"tasksPerSecond": per_scope, "admitted": per_scope_n, "limitsExact": per_scope_exact},
            "globalLock": {"tasksPerSecond": global, "admitted": global_n, "limitsExact": global_exact},
            "ratio": ratio,
        },
    });
    let out = std::path::Path::new(&std::env::var("BENCH_OUT").unwrap_or_else(|_| "target/bench".into()))
        .to_path_buf();
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("latest.json"), serde_json::to_string_pretty(&report)?)?;
    println!("written to {}", out.join("latest.json").display());
    if !(per_scope_exact && global_exact) {
        return Err("admission counts do not add up".into());
    }
    Ok(())
}
