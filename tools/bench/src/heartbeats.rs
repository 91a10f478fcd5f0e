//! Heartbeat capacity at volume (issue 36): 10,000 waiting callbacks, 9,000 of them one
//! tenant's, against a Step Functions stand-in that records every call, with every sweep held
//! 110 s by the batch duties (`aitasks_testkit::run_heartbeat_scale`; time runs 10 times faster
//! than the stack's, the call rate 10 times higher: the same calls a sweep). Printed: the longest
//! gap between heartbeats per token against `HeartbeatSeconds` 120, heartbeats a second, the
//! database time per sweep.

use std::time::Duration;

use aitasks_testkit::{run_heartbeat_scale, HeartbeatScale};
use serde_json::{json, Value};

use crate::size::Size;
use crate::{row, Failure};

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    let callbacks = size.pick(10_000, 2_000, 50);
    // A slower machine (or a debug build) keeps up at a smaller speedup: BENCH_HEARTBEAT_SPEEDUP.
    // A smoke run's sweeps (held 0.5 s each) are all it needs.
    let speedup = std::env::var("BENCH_HEARTBEAT_SPEEDUP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(size.pick(10, 10, 40));
    let scale = HeartbeatScale {
        callbacks,
        big_tenant: callbacks * 9 / 10,
        small_tenants: size.pick(20, 20, 5),
        speedup,
        // Ten minutes of the stack's time (three in quick runs, one in a smoke run).
        run_for: Duration::from_secs(size.pick(600, 180, 60)) / speedup,
        batch_hold: Duration::from_secs(size.pick(110, 110, 20)),
        call_latency: Duration::from_millis(20),
    };
    println!(
        "\nheartbeats: {callbacks} waiting callbacks ({} one tenant's), sweeps held {}s by batches, time x{}",
        scale.big_tenant,
        scale.batch_hold.as_secs(),
        scale.speedup
    );
    let figures = run_heartbeat_scale(&scale).await;
    let (db_mean, db_most) = figures.db_ms();
    let secs = |d: Duration| format!("{:.1}s", d.as_secs_f64());
    row("", &["max".into(), "p99".into(), "p50".into(), "limit".into()]);
    row(
        "longest gap between heartbeats, per token",
        &[
            secs(figures.longest_gap_max),
            secs(figures.longest_gap_p99),
            secs(figures.longest_gap_p50),
            secs(figures.heartbeat_seconds),
        ],
    );
    row(
        "tokens past HeartbeatSeconds (small tenants')",
        &[format!("{} ({})", figures.timed_out, figures.small_timed_out)],
    );
    row(
        "heartbeats/s; peak calls in a second (limit)",
        &[
            format!("{:.0}", figures.heartbeats_per_second),
            format!("{:.0}", figures.peak_calls_per_second),
            format!("({})", figures.calls_per_second_limit),
        ],
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
    Ok(json!({
        "callbacks": figures.tokens, "bigTenant": scale.big_tenant, "speedup": scale.speedup,
        "batchHoldSeconds": scale.batch_hold.as_secs(),
        "longestGapSeconds": {"max": figures.longest_gap_max.as_secs_f64(), "p99": figures.longest_gap_p99.as_secs_f64(),
                               "p50": figures.longest_gap_p50.as_secs_f64()},
        "heartbeatSeconds": figures.heartbeat_seconds.as_secs_f64(),
        "timedOut": figures.timed_out, "smallTenantsTimedOut": figures.small_timed_out,
        "heartbeatsPerSecond": figures.heartbeats_per_second,
        "peakCallsPerSecond": figures.peak_calls_per_second, "callsPerSecondLimit": figures.calls_per_second_limit,
        "mostInFlight": figures.most_in_flight,
        "sweeps": figures.sweeps.len(),
        "databaseMillisecondsPerSweep": {"mean": db_mean, "most": db_most},
        "databaseMillisecondsPerThousandHeartbeats": per_thousand,
    }))
}
