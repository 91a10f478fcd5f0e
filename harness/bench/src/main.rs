//! `make bench`: every figure printed beside its comparison, measured in the same run against
//! the same Postgres, and written to `target/bench/latest.json`. `BENCH_QUICK=1` shortens
//! every run. What each benchmark measures is in its module and in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod admission;
mod batch_results;
mod batches;
mod breakdown;
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
mod operations;
mod outage;
mod peers;
mod per_task;
mod pgbench;
mod reads;
mod round_trips;
mod simulate;
mod size;
mod streams;
mod targets;

use std::time::Duration;

use serde_json::{json, Map, Value};

use admission::{Serialization, CLIENTS};
use size::Size;

pub type Failure = Box<dyn std::error::Error + Send + Sync>;

fn row(label: &str, figures: &[String]) {
    print!("{label:<46}");
    for figure in figures {
        print!("{figure:>12}");
    }
    println!();
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
    clients: usize,
) -> Result<AdmissionRun, Failure> {
    let name = match serialization {
        Serialization::PerScope => "aitasks_bench_per_scope",
        Serialization::Global => "aitasks_bench_global",
    };
    let url = db::fresh_database(base, name).await?;
    let sampler = tokio::spawn(db::sample_waits_for(url.clone(), duration));
    let meter = cpu::CpuMeter::start()?;
    let (per_second, limits_exact, admitted) = admission::run(&url, serialization, duration, clients).await?;
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
        let per_scope = admission_run(base, Serialization::PerScope, duration, CLIENTS).await?.per_second;
        let global = admission_run(base, Serialization::Global, duration, CLIENTS).await?.per_second;
        Ok::<_, Failure>((per_scope, global))
    }
    .await;
    cpu::pin(postmaster, &format!("0-{}", cpus - 1))?;
    measured.map(Some)
}

async fn admission_section(base: &str, size: Size) -> Result<Value, Failure> {
    let duration = size.point(15, 3);
    let clients = size.client_count(admission::CLIENTS);
    println!(
        "\nadmission: {clients} concurrent creators over {} scopes, {:.1}s per run",
        admission::SCOPES,
        duration.as_secs_f64()
    );
    let ours = admission_run(base, Serialization::PerScope, duration, clients).await?;
    let theirs = admission_run(base, Serialization::Global, duration, clients).await?;
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
    // Not in a smoke run: it pins the cluster, which there is the test cluster of other tests.
    let one_cpu = if size.is_smoke() { None } else { admission_on_one_cpu(base, duration).await? };
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
        "clients": clients, "scopes": admission::SCOPES, "seconds": duration.as_secs_f64(),
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
    // A process the peers section started: one of this system's adapter roles.
    if let Some(result) = peers::role().await {
        return result;
    }
    let base = std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL is required (make bench sets it)")?;
    let size = Size::from_env();
    let quick = size != Size::Full;
    let out = std::path::PathBuf::from(std::env::var("BENCH_OUT").unwrap_or_else(|_| "target/bench".into()));
    std::fs::create_dir_all(&out)?;
    let only: Option<Vec<String>> =
        std::env::var("BENCH_ONLY").ok().map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
    let wanted = |name: &str| only.as_ref().is_none_or(|list| list.iter().any(|n| n == name));

    // Not part of `make bench`: `make simulate` asks for it alone, and keeps its own file.
    if only.as_ref().is_some_and(|list| list.iter().any(|n| n == "simulate")) {
        let figures = json!({
            "scopes": simulate::section(&base, size).await?,
            "fairness": fairness::section(&base, size).await?,
        });
        std::fs::write(out.join("simulate.json"), serde_json::to_string_pretty(&figures)?)?;
        println!("\nwritten to {}", out.join("simulate.json").display());
        return Ok(());
    }

    // The fairness half of `make simulate` alone (BENCH_ONLY=fairness).
    if only.as_ref().is_some_and(|list| list.iter().any(|n| n == "fairness")) {
        let figures = fairness::section(&base, size).await?;
        std::fs::write(out.join("fairness.json"), serde_json::to_string_pretty(&figures)?)?;
        return Ok(());
    }

    // Not part of `make bench` either: `make growth` (a cluster of its own, hours of data).
    if only.as_ref().is_some_and(|list| list.iter().any(|n| n == "growth")) {
        growth::section(&base).await?;
        return Ok(());
    }

    let bin_dir =
        std::path::PathBuf::from(std::env::var("BENCH_BIN_DIR").unwrap_or_else(|_| "target/release".into()));
    let mut report = Map::new();
    report.insert(
        "machine".into(),
        json!({"cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0), "quick": quick,
               "smoke": size.is_smoke()}),
    );
    if wanted("lifecycle") {
        report.insert("lifecycle".into(), per_task::section(&base, size, &out).await?);
    }
    if wanted("batches") {
        report.insert("batches".into(), batches::section(&base, size, &out).await?);
    }
    if wanted("round_trips") {
        report.insert("roundTrips".into(), round_trips::section(&base, size, &out).await?);
    }
    if wanted("admission") {
        report.insert("admission".into(), admission_section(&base, size).await?);
    }
    if wanted("e2e") {
        report.insert("endToEnd".into(), e2e::section(size).await?);
    }
    if wanted("graphile") {
        let peer = graphile::section(&base, size, &report).await?;
        report.insert("graphileWorker".into(), peer);
    }
    if wanted("peers") {
        report.insert("peers".into(), peers::section(&base, size, &out).await?);
    }
    if wanted("reads") {
        report.insert("reads".into(), reads::section(size).await?);
    }
    if wanted("operations") {
        report.insert("operations".into(), operations::section(size).await?);
    }
    if wanted("outage") {
        report.insert("outage".into(), outage::section(size).await?);
    }
    if wanted("streams") {
        report.insert("streams".into(), streams::section(size).await?);
    }
    if wanted("heartbeats") {
        report.insert("heartbeats".into(), heartbeats::section(size).await?);
    }
    if wanted("footprint") {
        report.insert("footprint".into(), footprint::section(&base, &bin_dir, size).await?);
    }
    if wanted("batch_results") {
        report.insert("batchResults".into(), batch_results::section(&base, &bin_dir, size).await?);
    }
    if wanted("footprint") {
        let cost = cost::section(&report)?;
        report.insert("costOfAMillionTasks".into(), cost);
    }
    // `make simulate`'s sections, at their smallest, in a smoke run of every section.
    if size.is_smoke() && only.is_none() {
        report.insert("simulate".into(), simulate::section(&base, size).await?);
        report.insert("fairness".into(), fairness::section(&base, size).await?);
    }
    if ["lifecycle", "batches", "peers", "footprint"].into_iter().any(&wanted) {
        let report_so_far = Value::Object(report.clone());
        report.insert("targets".into(), targets::section(&report_so_far));
    }
    std::fs::write(out.join("latest.json"), serde_json::to_string_pretty(&Value::Object(report))?)?;
    println!("\nwritten to {}", out.join("latest.json").display());
    if size.is_smoke() {
        db::drop_all(&base).await?;
    }
    Ok(())
}
