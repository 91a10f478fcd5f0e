//! Heartbeat capacity (issues 36 and 48), against a Step Functions stand-in that records every
//! call, in three runs:
//! - **real time**: 10,000 deferred tasks of one tenant created through the dev server's API,
//!   each awaited by its own token, on the one-minute schedule, watched for five minutes of
//!   wall time, as `make serve` runs them (`aitasks_testkit::run_served_heartbeats`);
//! - **held** (`aitasks_testkit::run_heartbeat_scale`, as the next): 10,000 waiting, 9,000 of them one tenant's, with every sweep held 110 s by the
//!   batch duties (time 10 times faster, the call rate 10 times higher: the same calls a sweep);
//! - **past the quota**: 100,000 waiting (ten tenants at their limit of 10,000) in a large
//!   region (400 calls a second) against a stand-in that throttles as the account does (a
//!   bucket of 3,000 refilled at 500 a second, 100 of which the workflows take), time 4 times
//!   faster: the `HeartbeatSeconds` the sweeps say they keep, against the gaps measured.
//!
//! Printed for each: the longest gap between heartbeats per token (max, p99, p50) against
//! `HeartbeatSeconds` 120 and the figure the sweeps stated, the calls a second (mean, peak, the
//! share of the run's seconds with any: how evenly they spread), the database time per sweep.

use std::time::Duration;

use aitasks_testkit::{run_heartbeat_scale, run_served_heartbeats, HeartbeatFigures, HeartbeatScale, Quota};
use serde_json::{json, Value};

use crate::size::Size;
use crate::{row, Failure};

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    // A slower machine (or a debug build) keeps up at a smaller speedup: BENCH_HEARTBEAT_SPEEDUP.
    let speedup = std::env::var("BENCH_HEARTBEAT_SPEEDUP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(size.pick(10, 10, 40));
    let held = HeartbeatScale {
        callbacks: size.pick(10_000, 2_000, 50),
        big_tenant: size.pick(9_000, 1_800, 45),
        small_tenants: size.pick(20, 20, 5),
        speedup,
        // Ten minutes of the stack's time (three in quick runs, one in a smoke run).
        run_for: Duration::from_secs(size.pick(600, 180, 60)) / speedup,
        batch_hold: Some(Duration::from_secs(size.pick(110, 110, 20))),
        call_latency: Duration::from_millis(20),
        calls_per_second: 250,
        quota: None,
    };
    // At most 20 in a smoke run: the stack's 400 calls a second, scaled, stay within the 10,000 the
    // configuration takes.
    let quota_speedup = size.pick(4, 4, 20);
    let past_quota = HeartbeatScale {
        callbacks: size.pick(100_000, 30_000, 60),
        big_tenant: size.pick(10_000, 3_000, 6),
        small_tenants: 9,
        speedup: quota_speedup,
        // Long enough for every token to come round three times at the stated figure.
        run_for: Duration::from_secs(size.pick(1_500, 900, 60)) / quota_speedup,
        batch_hold: None,
        call_latency: Duration::from_millis(20),
        calls_per_second: 400,
        quota: Some(Quota { size: 3_000.0, refill: 500.0, others: 100.0 }),
    };
    // BENCH_HEARTBEAT_RUNS=realTime,... runs only those.
    let runs = std::env::var("BENCH_HEARTBEAT_RUNS").unwrap_or_default();
    let wanted = |name: &str| runs.is_empty() || runs.split(',').any(|run| run.trim() == name);
    let mut report = serde_json::Map::new();
    if wanted("realTime") {
        report.insert("realTime".into(), served(size).await);
    }
    for (name, scale, says) in [
        ("heldByBatches", held, "every sweep held by batches"),
        (
            "pastTheQuota",
            past_quota,
            "past the quota: 400/s asked of a bucket of 3,000 refilled at 500/s, 100/s of it the workflows'",
        ),
    ] {
        if !wanted(name) {
            continue;
        }
        println!(
            "\nheartbeats, {says}: {} waiting callbacks ({} one tenant's){}, time x{}",
            scale.callbacks,
            scale.big_tenant,
            scale.batch_hold.map(|hold| format!(", sweeps held {}s", hold.as_secs())).unwrap_or_default(),
            scale.speedup
        );
        let figures = run_heartbeat_scale(&scale).await;
        report.insert(name.into(), print(&scale, &figures));
    }
    Ok(Value::Object(report))
}

/// The real-time run through the dev server (a smoke run: 50 tokens, three seconds, a sweep every
/// half second).
async fn served(size: Size) -> Value {
    let callbacks = size.pick(10_000, 10_000, 50);
    let run_for = Duration::from_secs(size.pick(300, 300, 3));
    let smoke = [("AITASK_SWEEP_INTERVAL_MS", "500"), ("AITASK_CALLBACK_HEARTBEAT_MS", "400")];
    let overrides: &[(&str, &str)] = if size.is_smoke() { &smoke } else { &[] };
    println!(
        "\nheartbeats at real time, as `make serve` runs them: {callbacks} deferred tasks of one tenant, each awaited by its own token, the one-minute schedule, {}s",
        run_for.as_secs()
    );
    let mut with_rate = vec![("AITASK_CALLBACK_CALLS_PER_SECOND", "250")];
    with_rate.extend_from_slice(overrides);
    let figures = run_served_heartbeats(callbacks, run_for, &with_rate).await;
    let secs = |d: Duration| format!("{:.1}s", d.as_secs_f64());
    row("", &["max".into(), "p99".into(), "limit".into(), "stated".into()]);
    row(
        "longest gap per token, from its create",
        &[
            secs(figures.longest_gap_max),
            secs(figures.longest_gap_p99),
            "120.0s".into(),
            figures.stated_kept.map_or("-".into(), |s| format!("{s}.0s")),
        ],
    );
    row(
        "  between heartbeats, from each token's first",
        &[secs(figures.between_max), secs(figures.between_p99)],
    );
    row(
        "tokens past 120 s; sweeps cut short",
        &[figures.past_120.to_string(), figures.cut_short_sweeps.to_string()],
    );
    row(
        "heartbeats; peak calls in a second (rate); sweeps",
        &[
            figures.heartbeats.to_string(),
            figures.peak_calls_per_second.to_string(),
            "(250)".into(),
            figures.sweeps.to_string(),
        ],
    );
    row("creating the tasks took", &[secs(figures.creating)]);
    json!({
        "callbacks": figures.tokens, "runSeconds": run_for.as_secs(), "creatingSeconds": figures.creating.as_secs_f64(),
        "longestGapSeconds": {"max": figures.longest_gap_max.as_secs_f64(), "p99": figures.longest_gap_p99.as_secs_f64()},
        "betweenHeartbeatsSeconds": {"max": figures.between_max.as_secs_f64(), "p99": figures.between_p99.as_secs_f64()},
        "past120": figures.past_120, "statedKeptSeconds": figures.stated_kept, "cutShortSweeps": figures.cut_short_sweeps,
        "heartbeats": figures.heartbeats, "peakCallsPerSecond": figures.peak_calls_per_second, "sweeps": figures.sweeps,
    })
}

fn print(scale: &HeartbeatScale, figures: &HeartbeatFigures) -> Value {
    let (db_mean, db_most) = figures.db_ms();
    let secs = |d: Duration| format!("{:.1}s", d.as_secs_f64());
    let stated = |d: Option<Duration>| d.map_or("-".to_owned(), secs);
    // The figure the sweeps said they keep (the most of them; the least is in the JSON).
    row("", &["max".into(), "p99".into(), "p50".into(), "limit".into(), "stated".into()]);
    row(
        "longest gap between heartbeats, per token",
        &[
            secs(figures.longest_gap_max),
            secs(figures.longest_gap_p99),
            secs(figures.longest_gap_p50),
            secs(figures.heartbeat_seconds),
            stated(figures.stated_kept_max),
        ],
    );
    row(
        "  between heartbeats, from each token's first",
        &[secs(figures.between_max), secs(figures.between_p99)],
    );
    row(
        "tokens past 120 s (small tenants'); past the stated",
        &[format!("{} ({})", figures.timed_out, figures.small_timed_out), figures.past_stated.to_string()],
    );
    row(
        "calls/s: mean, peak (limit); seconds with calls",
        &[
            format!("{:.0}", figures.mean_calls_per_second),
            format!("{:.0}", figures.peak_calls_per_second),
            format!("({})", figures.calls_per_second_limit),
            format!("{:.0}%", figures.busy_share * 100.0),
        ],
    );
    row(
        "heartbeats/s accepted; throttled calls",
        &[format!("{:.0}", figures.heartbeats_per_second), figures.throttled.to_string()],
    );
    row(
        "sweeps; longest sweep",
        &[figures.sweeps.len().to_string(), secs(figures.longest_sweep(scale.speedup))],
    );
    let heartbeats: u64 = figures.sweeps.iter().map(|s| s.callback_heartbeats).sum();
    let per_thousand = figures.db_ms_per_sweep.iter().sum::<f64>() * 1000.0 / heartbeats.max(1) as f64;
    row(
        "database ms per sweep (mean, most); per 1,000 beats",
        &[format!("{db_mean:.1}"), format!("{db_most:.1}"), format!("{per_thousand:.1}")],
    );
    let seconds = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    json!({
        "callbacks": figures.tokens, "bigTenant": scale.big_tenant, "speedup": scale.speedup,
        "batchHoldSeconds": scale.batch_hold.map(|hold| hold.as_secs()),
        "longestGapSeconds": {"max": figures.longest_gap_max.as_secs_f64(), "p99": figures.longest_gap_p99.as_secs_f64(),
                               "p50": figures.longest_gap_p50.as_secs_f64()},
        "betweenHeartbeatsSeconds": {"max": figures.between_max.as_secs_f64(), "p99": figures.between_p99.as_secs_f64()},
        "heartbeatSeconds": figures.heartbeat_seconds.as_secs_f64(),
        "statedKeptSeconds": {"min": seconds(figures.stated_kept_min), "max": seconds(figures.stated_kept_max)},
        "timedOut": figures.timed_out, "smallTenantsTimedOut": figures.small_timed_out,
        "pastStated": figures.past_stated,
        "heartbeatsPerSecond": figures.heartbeats_per_second,
        "meanCallsPerSecond": figures.mean_calls_per_second, "busyShare": figures.busy_share,
        "peakCallsPerSecond": figures.peak_calls_per_second, "callsPerSecondLimit": figures.calls_per_second_limit,
        "throttled": figures.throttled,
        "mostInFlight": figures.most_in_flight,
        "sweeps": figures.sweeps.len(),
        "databaseMillisecondsPerSweep": {"mean": db_mean, "most": db_most},
        "databaseMillisecondsPerThousandHeartbeats": per_thousand,
    })
}
