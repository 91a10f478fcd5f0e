//! `make bench`: every figure printed beside its comparison, measured in the same run against
//! the same Postgres, and written to `target/bench/latest.json`. `BENCH_QUICK=1` shortens
//! every run. What each benchmark measures is in its module and in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod admission;
mod batch_results;
mod batches;
mod cost;
mod cpu;
mod db;
mod e2e;
mod fairness;
mod footprint;
mod graphile;
mod growth;
mod heartbeats;
mod lifecycle;
mod pgbench;
mod round_trips;
mod simulate;

use std::time::Duration;

use serde_json::{json, Map, Value};

use admission::Serialization;

pub type Failure = Box<dyn std::error::Error + Send + Sync>;

const LIFECYCLE_CLIENTS: [usize; 5] = [1, 4, 10, 16, 64];

fn row(label: &str, figures: &[String]) {
    print!("{label:<46}");
    for figure in figures {
        print!("{figure:>12}");
    }
    println!();
}

/// The client counts of the lifecycle benchmark (`BENCH_CLIENTS=64` narrows it, for profiling).
fn lifecycle_clients() -> Vec<usize> {
    std::env::var("BENCH_CLIENTS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|list: &Vec<usize>| !list.is_empty())
        .unwrap_or_else(|| LIFECYCLE_CLIENTS.to_vec())
}

async fn lifecycle_section(base: &str, quick: bool, out: &std::path::Path) -> Result<Value, Failure> {
    let clients_list = lifecycle_clients();
    let duration = if quick { Duration::from_secs(3) } else { Duration::from_secs(10) };
    let url = db::fresh_database(base, "aitasks_bench_lifecycle").await?;
    let floor_script = pgbench::script_file(out, "floor.sql", pgbench::FLOOR)?;
    let reference_script = pgbench::script_file(out, "reference.sql", pgbench::REFERENCE)?;
    println!(
        "\nstore lifecycle: tasks/s, {}s per point (create → claim → heartbeat → complete + event)",
        duration.as_secs()
    );
    row("clients", &clients_list.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    let (mut ours, mut floor, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    let most = clients_list.iter().copied().max().unwrap_or(0);
    let mut waits = Vec::new();
    let (mut our_wal, mut floor_wal) = (db::WalCounters::default(), db::WalCounters::default());
    for &clients in &clients_list {
        db::reset_tasks(&url).await?;
        if clients == most {
            // What the busiest point waits on (profiling without perf: wait events), and what
            // one task costs the WAL.
            let sampler = tokio::spawn(db::sample_waits(url.clone(), std::time::Instant::now() + duration));
            let before = db::WalCounters::read(&url).await?;
            ours.push(lifecycle::run(&url, clients, duration).await?);
            our_wal =
                db::WalCounters::read(&url).await?.per_task_since(&before, db::count_tasks(&url).await?);
            waits = sampler.await??;
        } else {
            ours.push(lifecycle::run(&url, clients, duration).await?);
        }
        db::reset_tasks(&url).await?;
        let before = db::WalCounters::read(&url).await?;
        floor.push(pgbench::run(&url, &floor_script, clients, pgbench::Limit::Duration(duration))?);
        if clients == most {
            floor_wal =
                db::WalCounters::read(&url).await?.per_task_since(&before, db::count_tasks(&url).await?);
        }
        db::connect(&url).await?.batch_execute(pgbench::REFERENCE_SETUP).await?;
        reference.push(pgbench::run(&url, &reference_script, clients, pgbench::Limit::Duration(duration))?);
    }
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>();
    let ratio =
        |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| format!("{:.2}x", x / y)).collect::<Vec<_>>();
    row("this system (store lifecycle, event included)", &fmt(&ours));
    row("floor: 3 plain statements (pgbench)", &fmt(&floor));
    row("reference statement sequence (pgbench)", &fmt(&reference));
    row("ratio to the floor (target ≥ 0.7x at 64)", &ratio(&ours, &floor));
    row("ratio to the reference (target ≥ 3x at 64)", &ratio(&ours, &reference));
    println!("at {most} clients, this system's sessions were: {}", db::top_waits(&waits));
    let wal = |w: &db::WalCounters| {
        format!(
            "{:.1} records, {:.2} full pages, {:.0} bytes, {:.2} flushes",
            w.records, w.full_pages, w.bytes, w.syncs
        )
    };
    println!("WAL per task at {most} clients: this system {}; floor {}", wal(&our_wal), wal(&floor_wal));
    let points: Vec<Value> = clients_list
        .iter()
        .enumerate()
        .map(|(i, clients)| {
            json!({"clients": clients, "tasksPerSecond": ours[i], "floor": floor[i], "reference": reference[i],
                   "ratioToFloor": ours[i] / floor[i], "ratioToReference": ours[i] / reference[i]})
        })
        .collect();
    let waits: Vec<Value> =
        waits.iter().map(|(event, share)| json!({"event": event, "share": share})).collect();
    let wal_json = |w: &db::WalCounters| json!({"records": w.records, "fullPageImages": w.full_pages, "bytes": w.bytes, "flushes": w.syncs});
    Ok(json!({"seconds": duration.as_secs(), "points": points, "waitsAtMostClients": waits,
              "walPerTaskAtMostClients": {"ours": wal_json(&our_wal), "floor": wal_json(&floor_wal)}}))
}

/// One admission run on a fresh database.
struct AdmissionRun {
    per_second: f64,
    limits_exact: bool,
    admitted: u64,
    /// Busy CPU-milliseconds of the whole machine per admission.
    cpu_ms: f64,
    /// What the creators' sessions waited on.
    waits: Vec<(String, f64)>,
}

impl AdmissionRun {
    fn print(&self, label: &str) {
        let limits = if self.limits_exact { "exact" } else { "BROKEN" };
        row(label, &[format!("{:.0}", self.per_second), limits.into(), format!("{:.2}", self.cpu_ms)]);
    }

    fn json(&self) -> Value {
        json!({"tasksPerSecond": self.per_second, "admitted": self.admitted, "limitsExact": self.limits_exact,
               "cpuMillisecondsPerTask": self.cpu_ms})
    }
}

async fn admission_run(
    base: &str,
    serialization: Serialization,
    duration: Duration,
) -> Result<AdmissionRun, Failure> {
    let name = match serialization {
        Serialization::PerScope => "aitasks_bench_per_scope",
        Serialization::Global => "aitasks_bench_global",
    };
    let url = db::fresh_database(base, name).await?;
    let sampler = tokio::spawn(db::sample_waits(url.clone(), std::time::Instant::now() + duration));
    let meter = cpu::CpuMeter::start()?;
    let (per_second, limits_exact, admitted) = admission::run(&url, serialization, duration).await?;
    let cpu_ms = meter.busy_seconds()? * 1000.0 / admitted.max(1) as f64;
    Ok(AdmissionRun { per_second, limits_exact, admitted, cpu_ms, waits: sampler.await?? })
}

/// Both designs again with the cluster and the creators pinned to one CPU: how each scales
/// with cores. `None` on a one-CPU machine or without `taskset`.
async fn admission_on_one_cpu(base: &str, duration: Duration) -> Result<Option<(f64, f64)>, Failure> {
    let cpus = cpu::online_cpus();
    if cpus < 2 || std::process::Command::new("taskset").arg("-V").output().is_err() {
        return Ok(None);
    }
    let backend: i32 = db::connect(base).await?.query_one("SELECT pg_backend_pid()", &[]).await?.get(0);
    let postmaster = cpu::postmaster_of(backend)?;
    cpu::pin(postmaster, "0")?;
    let measured = async {
        let per_scope = admission_run(base, Serialization::PerScope, duration).await?.per_second;
        let global = admission_run(base, Serialization::Global, duration).await?.per_second;
        Ok::<_, Failure>((per_scope, global))
    }
    .await;
    cpu::pin(postmaster, &format!("0-{}", cpus - 1))?;
    measured.map(Some)
}

async fn admission_section(base: &str, quick: bool) -> Result<Value, Failure> {
    let duration = if quick { Duration::from_secs(3) } else { Duration::from_secs(15) };
    println!(
        "\nadmission: {} concurrent creators over {} scopes, {}s per run",
        admission::CLIENTS,
        admission::SCOPES,
        duration.as_secs()
    );
    let ours = admission_run(base, Serialization::PerScope, duration).await?;
    let theirs = admission_run(base, Serialization::Global, duration).await?;
    let (per_scope, global) = (ours.per_second, theirs.per_second);
    let ratio = per_scope / global;
    let cpus = cpu::online_cpus();
    row("", &["tasks/s".into(), "limits".into(), "CPU ms/task".into()]);
    ours.print("per-scope serialization (this system)");
    theirs.print("one global advisory lock (reference design)");
    row("ratio (target: at least 4x)", &[format!("{ratio:.2}x")]);
    println!("per-scope creators' sessions were: {}", db::top_waits(&ours.waits));
    if !(ours.limits_exact && theirs.limits_exact) {
        return Err("admission counts do not add up".into());
    }
    let one_cpu = admission_on_one_cpu(base, duration).await?;
    if let Some((per_scope_1, global_1)) = one_cpu {
        row("", &["1 CPU".into(), format!("{cpus} CPUs"), "scaling".into()]);
        row(
            "per-scope serialization (this system)",
            &[
                format!("{per_scope_1:.0}"),
                format!("{per_scope:.0}"),
                format!("{:.2}x", per_scope / per_scope_1),
            ],
        );
        row(
            "one global advisory lock (reference design)",
            &[format!("{global_1:.0}"), format!("{global:.0}"), format!("{:.2}x", global / global_1)],
        );
    }
    Ok(json!({
        "clients": admission::CLIENTS, "scopes": admission::SCOPES, "seconds": duration.as_secs(),
        "perScope": ours.json(),
        "globalLock": theirs.json(),
        "ratio": ratio,
        "cpus": cpus,
        "onOneCpu": one_cpu.map(|(p, g)| json!({"perScope": p, "globalLock": g, "ratio": p / g})),
        "perScopeWaits": ours.waits.iter().map(|(event, share)| json!({"event": event, "share": share})).collect::<Vec<_>>(),
    }))
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let base = std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL is required (make bench sets it)")?;
    let quick = std::env::var("BENCH_QUICK").is_ok_and(|v| v == "1");
    let out = std::path::PathBuf::from(std::env::var("BENCH_OUT").unwrap_or_else(|_| "target/bench".into()));
    std::fs::create_dir_all(&out)?;
    let only: Option<Vec<String>> =
        std::env::var("BENCH_ONLY").ok().map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
    let wanted = |name: &str| only.as_ref().is_none_or(|list| list.iter().any(|n| n == name));

    // Not part of `make bench`: `make simulate` asks for it alone, and keeps its own file.
    if only.as_ref().is_some_and(|list| list.iter().any(|n| n == "simulate")) {
        let figures = json!({
            "scopes": simulate::section(&base, quick).await?,
            "fairness": fairness::section(&base, quick).await?,
        });
        std::fs::write(out.join("simulate.json"), serde_json::to_string_pretty(&figures)?)?;
        println!("\nwritten to {}", out.join("simulate.json").display());
        return Ok(());
    }

    // The fairness half of `make simulate` alone (BENCH_ONLY=fairness).
    if only.as_ref().is_some_and(|list| list.iter().any(|n| n == "fairness")) {
        let figures = fairness::section(&base, quick).await?;
        std::fs::write(out.join("fairness.json"), serde_json::to_string_pretty(&figures)?)?;
        return Ok(());
    }

    // Not part of `make bench` either: `make growth` (a cluster of its own, hours of data).
    if only.as_ref().is_some_and(|list| list.iter().any(|n| n == "growth")) {
        growth::section(&base).await?;
        return Ok(());
    }

    let mut report = Map::new();
    report.insert(
        "machine".into(),
        json!({"cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0), "quick": quick}),
    );
    if wanted("lifecycle") {
        report.insert("lifecycle".into(), lifecycle_section(&base, quick, &out).await?);
    }
    if wanted("batches") {
        report.insert("batches".into(), batches::section(&base, quick, &out).await?);
    }
    if wanted("round_trips") {
        report.insert("roundTrips".into(), round_trips::section(&base, &out).await?);
    }
    if wanted("admission") {
        report.insert("admission".into(), admission_section(&base, quick).await?);
    }
    if wanted("e2e") {
        report.insert("endToEnd".into(), e2e::section(quick).await?);
    }
    if wanted("graphile") {
        let ours_at_10 = report
            .get("lifecycle")
            .and_then(|l| l["points"].as_array().cloned())
            .and_then(|points| points.into_iter().find(|p| p["clients"] == 10))
            .and_then(|p| p["tasksPerSecond"].as_f64());
        report.insert("graphileWorker".into(), graphile::section(&base, quick, ours_at_10).await?);
    }
    if wanted("heartbeats") {
        report.insert("heartbeats".into(), heartbeats::section(quick).await?);
    }
    if wanted("footprint") {
        let bin_dir = std::path::PathBuf::from(
            std::env::var("BENCH_BIN_DIR").unwrap_or_else(|_| "target/release".into()),
        );
        report.insert("footprint".into(), footprint::section(&base, &bin_dir).await?);
    }
    if wanted("batch_results") {
        let bin_dir = std::path::PathBuf::from(
            std::env::var("BENCH_BIN_DIR").unwrap_or_else(|_| "target/release".into()),
        );
        report.insert("batchResults".into(), batch_results::section(&base, &bin_dir).await?);
    }
    if wanted("footprint") {
        let cost = cost::section(&report)?;
        report.insert("costOfAMillionTasks".into(), cost);
    }
    std::fs::write(out.join("latest.json"), serde_json::to_string_pretty(&Value::Object(report))?)?;
    println!("\nwritten to {}", out.join("latest.json").display());
    Ok(())
}
