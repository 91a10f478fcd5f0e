//! Heartbeats as a user meets them (issue 48; `make bench`'s `heartbeats` section, "served"):
//! the dev server on its one-minute schedule, deferred tasks of one tenant created through the
//! HTTP API, each awaited by its own Step Functions token, watched at real time against the
//! Step Functions stand-in. The tasks await a provider batch (their profile batches 2,000 at a
//! time, with a day's wait) whose result the stand-in provider holds back, so every callback
//! waits the whole time, as a workflow's would for a nightly batch. What a caller sees is measured: the longest gap of
//! every token from its create through its heartbeats, and the figure the sweeps' log lines
//! state (`heartbeatSecondsKept`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::{gaps_between_heartbeats, longest_gaps, percentile, SfnStub, Stack, StubBatches, BATCH_STUB_KEY};

/// What the served run measured, in seconds of wall time.
#[derive(Debug, Clone)]
pub struct ServedHeartbeats {
    pub tokens: usize,
    /// How long the creates took (the tokens were attached over this time).
    pub creating: Duration,
    /// The longest gap of each token, from its create's answer: worst, 99th percentile.
    pub longest_gap_max: Duration,
    pub longest_gap_p99: Duration,
    /// From each token's first heartbeat on: worst, 99th percentile.
    pub between_max: Duration,
    pub between_p99: Duration,
    /// Tokens whose longest gap passed 120 s.
    pub past_120: usize,
    /// Heartbeats accepted, and the most calls in any one second.
    pub heartbeats: usize,
    pub peak_calls_per_second: usize,
    /// The sweeps' log lines: how many, and the most `heartbeatSecondsKept` any stated.
    pub sweeps: usize,
    pub stated_kept: Option<u64>,
    pub cut_short_sweeps: usize,
}

/// Create `callbacks` deferred tasks with a token each through the dev server (with `overrides`
/// on top of the one-minute schedule), then watch for `run_for`.
pub async fn run_served_heartbeats(
    callbacks: usize,
    run_for: Duration,
    overrides: &[(&str, &str)],
) -> ServedHeartbeats {
    let sfn = SfnStub::start().await;
    sfn.set_latency(Duration::from_millis(20));
    let batches = StubBatches::start().await;
    batches.hold();
    let models = json!({
        "nightly": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                    "apiKeyEnv": "BATCH_KEY", "batch": {"maxRecords": 2_000, "maxWaitSeconds": 86_400}}
    })
    .to_string();
    let mut env: Vec<(&str, &str)> = vec![
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
        ("AITASK_MODELS", &models),
        ("BATCH_KEY", BATCH_STUB_KEY),
        ("AWS_ENDPOINT_URL_SFN", &sfn.endpoint),
        ("AITASK_LOCAL_POLL_WAIT_S", "10"),
        ("RUST_LOG", "warn"),
    ];
    env.extend_from_slice(overrides);
    let stack = Stack::start_with(&env).await;
    let api = stack.api("served-tenant");

    let started = Instant::now();
    let mut tokens = Vec::with_capacity(callbacks);
    let mut attached = Vec::with_capacity(callbacks);
    for chunk in 0..callbacks.div_ceil(500) {
        let items: Vec<Value> = (chunk * 500..((chunk + 1) * 500).min(callbacks))
            .map(|i| {
                json!({"owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": format!("served-{i}"),
                       "modelId": "nightly", "delivery": {"deferred": {"within": "PT24H"}},
                       "callback": {"stepFunctions": {"taskToken": format!("served-token-{i}")}},
                       "request": {"kind": "classify", "prompt": "Route it.", "input": "x", "choices": ["a", "b"]}})
            })
            .collect();
        let (status, body) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
        assert!(status < 300, "bulk create: {status} {body}");
        let at = Instant::now();
        for i in chunk * 500..((chunk + 1) * 500).min(callbacks) {
            tokens.push(format!("served-token-{i}"));
            attached.push(at);
        }
    }
    let creating = started.elapsed();
    tokio::time::sleep_until((started + run_for).into()).await;
    let ended = Instant::now();

    let beats = sfn.heartbeats();
    let mut gaps: Vec<Duration> = tokens
        .iter()
        .zip(&attached)
        .filter_map(|(token, at)| longest_gaps(std::slice::from_ref(token), &beats, *at, ended).pop())
        .collect();
    gaps.sort_unstable();
    let between = gaps_between_heartbeats(&tokens, &beats, ended);
    let sweeps: Vec<Value> =
        stack.server.json_lines().into_iter().filter_map(|line| line.get("sweep").cloned()).collect();
    ServedHeartbeats {
        tokens: tokens.len(),
        creating,
        longest_gap_max: gaps.last().copied().unwrap_or_default(),
        longest_gap_p99: percentile(&gaps, 0.99),
        between_max: between.last().copied().unwrap_or_default(),
        between_p99: percentile(&between, 0.99),
        past_120: gaps.iter().filter(|gap| **gap > Duration::from_secs(120)).count(),
        heartbeats: beats.values().map(Vec::len).sum(),
        peak_calls_per_second: sfn.peak_calls_per_second(),
        sweeps: sweeps.len(),
        stated_kept: sweeps.iter().filter_map(|sweep| sweep["heartbeatSecondsKept"].as_u64()).max(),
        cut_short_sweeps: sweeps.iter().filter(|sweep| sweep["heartbeatsCutShort"] == true).count(),
    }
}
