//! The peer: graphile-worker (npm, in its default configuration, concurrency 10) working off
//! 20,000 no-op jobs on the same Postgres, beside this system's store lifecycle at the same
//! concurrency (each of our tasks also writes its completion event). Skipped, with the reason
//! printed, only when it cannot be installed.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::{db, lifecycle, row, Failure};

pub(crate) const VERSION: &str = "0.17.3";
const CONCURRENCY: usize = 10;

/// Install graphile-worker once into the cache folder; the folder holding `run.mjs`.
fn install(cache: &Path) -> Result<std::path::PathBuf, Failure> {
    let dir = cache.join(format!("graphile-worker-{VERSION}"));
    if !dir.join("node_modules/graphile-worker").exists() {
        std::fs::create_dir_all(&dir)?;
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&dir)
            .arg(format!("graphile-worker@{VERSION}"))
            .status()?;
        if !status.success() {
            return Err(format!("npm install graphile-worker@{VERSION} failed").into());
        }
    }
    std::fs::write(dir.join("run.mjs"), include_str!("../graphile/run.mjs"))?;
    Ok(dir)
}

pub(crate) async fn section(base: &str, quick: bool, ours_at_10: Option<f64>) -> Result<Value, Failure> {
    let jobs: u64 = if quick { 5000 } else { 20000 };
    println!("\npeer: graphile-worker {VERSION}, {jobs} no-op jobs, concurrency {CONCURRENCY}");
    let cache = std::path::PathBuf::from(std::env::var("AITASK_CACHE").unwrap_or_else(|_| {
        format!("{}/.cache/aitasks", std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()))
    }));
    let dir = match install(&cache) {
        Ok(dir) => dir,
        Err(reason) => {
            println!("  skipped: {reason}");
            return Ok(json!({"skipped": reason.to_string()}));
        }
    };
    let url = db::fresh_database(base, "aitasks_bench_graphile").await?;
    let output = Command::new("node")
        .arg(dir.join("run.mjs"))
        .env("DATABASE_URL", &url)
        .env("JOBS", jobs.to_string())
        .env("CONCURRENCY", CONCURRENCY.to_string())
        .env("GRAPHILE_VERSION", VERSION)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value =
        stdout.lines().rev().find_map(|line| serde_json::from_str(line).ok()).ok_or_else(|| {
            format!("graphile-worker printed no result: {stdout}{}", String::from_utf8_lossy(&output.stderr))
        })?;
    let theirs = result["jobsPerSecond"].as_f64().ok_or("no jobsPerSecond")?;
    let ours = match ours_at_10 {
        Some(figure) => figure,
        None => {
            let url = db::fresh_database(base, "aitasks_bench_lifecycle10").await?;
            lifecycle::run(&url, CONCURRENCY, Duration::from_secs(if quick { 3 } else { 10 })).await?
        }
    };
    row("graphile-worker jobs/s (processing only)", &[format!("{theirs:.0}")]);
    row("this system tasks/s (create + lifecycle + event)", &[format!("{ours:.0}")]);
    row("ratio (target: at least 1.0x)", &[format!("{:.2}x", ours / theirs)]);
    Ok(json!({"version": VERSION, "jobs": jobs, "concurrency": CONCURRENCY, "graphileJobsPerSecond": theirs,
              "oursTasksPerSecond": ours, "ratio": ours / theirs}))
}
