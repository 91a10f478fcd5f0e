//! The peer: graphile-worker (npm, in its default configuration, concurrency 10) working off
//! 20,000 no-op jobs on the same Postgres, beside this system on the same machine: the store
//! lifecycle at the same concurrency (each of our tasks also writes its completion event) and,
//! when the end-to-end section ran, its throughput (HTTP create to the completion event on the
//! queue). graphile-worker is installed by `scripts/graphile.sh` from the lockfile in
//! `harness/bench/graphile/`, once, into the cache folder outside the clone (`scripts/warm.sh`
//! does it in the background); a failed install fails the section.

use std::process::Command;

use serde_json::{json, Map, Value};

use crate::size::Size;
use crate::{db, lifecycle, row, Failure};

const CONCURRENCY: usize = 10;

/// The installed folder, holding `run.mjs` and `node_modules`.
fn install() -> Result<std::path::PathBuf, Failure> {
    let script = aitasks_testkit::workspace_root().join("scripts/graphile.sh");
    let output = Command::new(&script).arg("install").output()?;
    if !output.status.success() {
        return Err(format!(
            "{} install failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let dir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    Ok(dir.into())
}

/// The version the lockfile installed.
fn version(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("node_modules/graphile-worker/package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|package| package["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

pub(crate) async fn section(base: &str, size: Size, report: &Map<String, Value>) -> Result<Value, Failure> {
    let jobs: u64 = size.pick(20_000, 5_000, 50);
    let dir = install()?;
    let version = version(&dir);
    println!("\npeer: graphile-worker {version}, {jobs} no-op jobs, concurrency {CONCURRENCY}, same machine and Postgres");
    let url = db::fresh_database(base, "aitasks_bench_graphile").await?;
    let output = Command::new("node")
        .arg(dir.join("run.mjs"))
        .env("DATABASE_URL", &url)
        .env("JOBS", jobs.to_string())
        .env("CONCURRENCY", CONCURRENCY.to_string())
        .env("GRAPHILE_VERSION", &version)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value =
        stdout.lines().rev().find_map(|line| serde_json::from_str(line).ok()).ok_or_else(|| {
            format!("graphile-worker printed no result: {stdout}{}", String::from_utf8_lossy(&output.stderr))
        })?;
    let theirs = result["jobsPerSecond"].as_f64().ok_or("no jobsPerSecond")?;
    let at_ten = report
        .get("lifecycle")
        .and_then(|l| l["points"].as_array().cloned())
        .and_then(|points| points.into_iter().find(|p| p["clients"] == CONCURRENCY))
        .and_then(|p| p["tasksPerSecond"].as_f64());
    let ours = match at_ten {
        Some(figure) => figure,
        None => {
            let url = db::fresh_database(base, "aitasks_bench_lifecycle10").await?;
            lifecycle::run(&url, size.client_count(CONCURRENCY), size.point(10, 3)).await?
        }
    };
    let end_to_end = report.get("endToEnd").and_then(|e| e["tasksPerSecond"].as_f64());
    row("graphile-worker jobs/s (processing only)", &[format!("{theirs:.0}")]);
    row(
        "this system: store lifecycle tasks/s at 10 clients",
        &[format!("{ours:.0}"), format!("{:.2}x", ours / theirs)],
    );
    match end_to_end {
        Some(e2e) => row(
            "this system: end to end tasks/s (HTTP to event)",
            &[format!("{e2e:.0}"), format!("{:.2}x", e2e / theirs)],
        ),
        None => println!("  (end to end: BENCH_ONLY left the e2e section out)"),
    }
    Ok(json!({"version": version, "jobs": jobs, "concurrency": CONCURRENCY, "graphileJobsPerSecond": theirs,
              "oursTasksPerSecond": ours, "ratio": ours / theirs,
              "endToEndTasksPerSecond": end_to_end, "endToEndRatio": end_to_end.map(|e| e / theirs)}))
}
