//! The heartbeat scale scenario (issues 36 and 48; `make bench`'s `heartbeats` section runs it
//! at real time with 10,000 callbacks, held by batches, and past Step Functions' quota with
//! 100,000; the sweeper's tests run short forms): waiting callbacks, most of them one tenant's,
//! against the Step Functions stand-in, sweeps starting on the one-minute schedule and, as with
//! the stack's reserved concurrency of 1, never two at once; optionally every sweep held by the
//! batch duties (a provider whose batch API answers slowly), and the stand-in throttling as the
//! account's quota would. Time may run `speedup` times faster than the stack's (the heartbeat
//! interval, the window, the schedule and the hold all divided, the rates multiplied): the same
//! calls per sweep, in less wall time; 1 is real time. What a caller sees is measured: the
//! longest gap between heartbeats of every token, against the state's `HeartbeatSeconds` of 120
//! and against the figure the sweeps said they keep.

use std::time::{Duration, Instant};

use aitasks_contracts::AppId;
use aitasks_runtime::sweeper::{self, SweepSummary};
use aitasks_store::{self as store, NewCallback, OwedMessage};
use serde_json::json;

use crate::{
    app_owner, gaps_between_heartbeats, longest_gaps, new_task, percentile, test_app, Quota, SfnStub,
    StubBatches, StubProvider, TestDb, TestQueues, BATCH_STUB_KEY,
};

/// The scenario's size and pace.
#[derive(Debug, Clone)]
pub struct HeartbeatScale {
    /// Waiting callbacks in all.
    pub callbacks: usize,
    /// Of them, the big tenant's; the rest are spread over `small_tenants`.
    pub big_tenant: usize,
    pub small_tenants: usize,
    /// How much faster than the stack's time this runs.
    pub speedup: u32,
    /// How long the sweeps run (wall time).
    pub run_for: Duration,
    /// How long the batch duties hold each sweep, in the stack's time (issue 36 measured 110
    /// s); none: no batch, the sweeps' other duties take milliseconds.
    pub batch_hold: Option<Duration>,
    /// Step Functions' round trip (in the stack's time, divided like the rest).
    pub call_latency: Duration,
    /// `AITASK_CALLBACK_CALLS_PER_SECOND`, in the stack's time.
    pub calls_per_second: u32,
    /// The account's `SendTaskHeartbeat` quota, in the stack's time (none: never throttled).
    pub quota: Option<Quota>,
}

/// What the scenario measured.
#[derive(Debug, Clone)]
pub struct HeartbeatFigures {
    pub tokens: usize,
    /// `HeartbeatSeconds` 120, in this run's time.
    pub heartbeat_seconds: Duration,
    /// The longest gap between heartbeats of each token, worst and 99th percentile and median,
    /// in the stack's time (multiplied back by the speedup).
    pub longest_gap_max: Duration,
    pub longest_gap_p99: Duration,
    pub longest_gap_p50: Duration,
    /// The longest gap between two heartbeats (or the last one and the end) of each token, from
    /// its first heartbeat on: the steady state, without the wait for a first heartbeat that
    /// every token attached at the start shares. Worst and 99th percentile, in the stack's time.
    pub between_max: Duration,
    pub between_p99: Duration,
    /// Tokens whose longest gap passed `heartbeat_seconds`: their state would have timed out.
    pub timed_out: usize,
    /// Of them, the small tenants'.
    pub small_timed_out: usize,
    /// Accepted heartbeats a second, in the stack's time.
    pub heartbeats_per_second: f64,
    /// The most calls in any one second, in the stack's time, and the configured rate.
    pub peak_calls_per_second: f64,
    pub calls_per_second_limit: u32,
    pub most_in_flight: usize,
    /// Calls a second over the whole run, in the stack's time, and the share of its seconds that
    /// had any: how evenly the heartbeats spread over each period.
    pub mean_calls_per_second: f64,
    pub busy_share: f64,
    /// Heartbeats AWS throttled.
    pub throttled: usize,
    /// The `HeartbeatSeconds` the sweeps said they keep (`heartbeatSecondsKept`), most and least
    /// over every sweep but the first, in the stack's time (none: no sweep said).
    pub stated_kept_max: Option<Duration>,
    pub stated_kept_min: Option<Duration>,
    /// Tokens whose longest gap passed the most the sweeps stated.
    pub past_stated: usize,
    pub sweeps: Vec<SweepSummary>,
    /// The server's time on the callbacks' statements (taking pages, recording), each sweep, in
    /// milliseconds (`pg_stat_statements`).
    pub db_ms_per_sweep: Vec<f64>,
}

impl HeartbeatFigures {
    /// The server's time on the callbacks' statements per sweep: mean and most, in milliseconds.
    pub fn db_ms(&self) -> (f64, f64) {
        let all = &self.db_ms_per_sweep;
        let mean = all.iter().sum::<f64>() / all.len().max(1) as f64;
        (mean, all.iter().copied().fold(0.0, f64::max))
    }

    /// How long the sweeps took, most, in the stack's time.
    pub fn longest_sweep(&self, speedup: u32) -> Duration {
        Duration::from_millis(self.sweeps.iter().map(|s| s.elapsed_ms).max().unwrap_or(0)) * speedup
    }
}

/// Run the scenario on a database of its own.
pub async fn run_heartbeat_scale(scale: &HeartbeatScale) -> HeartbeatFigures {
    let speedup = scale.speedup.max(1);
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let provider = StubProvider::start().await;
    let batches = StubBatches::start().await;
    batches.hold();
    // One status read a sweep (the first sweep also uploads and creates: three reads' worth).
    batches.set_latency(scale.batch_hold.unwrap_or_default() / speedup);
    let sfn = SfnStub::start().await;
    sfn.set_latency(scale.call_latency / speedup);
    if let Some(quota) = scale.quota {
        let k = f64::from(speedup);
        sfn.set_quota(Quota { size: quota.size, refill: quota.refill * k, others: quota.others * k });
    }
    let rate = scale.calls_per_second * speedup;
    let scaled = |stack_ms: u64| (Duration::from_millis(stack_ms) / speedup).as_millis().to_string();
    let models = json!({
        "batchable": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY", "batch": {"maxRecords": 1, "maxWaitSeconds": 1}}
    })
    .to_string();
    let (heartbeat_ms, interval_ms, rate_text) = (scaled(45_000), scaled(60_000), rate.to_string());
    let app = test_app(
        &db,
        &queues,
        &provider,
        &[
            ("AITASK_MODELS", &models),
            ("BATCH_KEY", BATCH_STUB_KEY),
            ("AITASK_BATCH_POLL_MS", "100"),
            ("AITASK_CALLBACK_HEARTBEAT_MS", &heartbeat_ms),
            ("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", &heartbeat_ms),
            ("AITASK_SWEEP_INTERVAL_MS", &interval_ms),
            ("AITASK_CALLBACK_CALLS_PER_SECOND", &rate_text),
        ],
    )
    .with_aws(&sfn.sdk_config().await);

    if scale.batch_hold.is_some() {
        // The batch the sweeps are held by: one deferred task, in a batch that never ends.
        let tenant = AppId::parse("bench-batches").expect("tenant");
        let deferred = json!({"owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": "held",
            "modelId": "batchable", "delivery": {"deferred": {"within": "PT24H"}},
            "request": {"kind": "classify", "prompt": "Route it.", "input": "x", "choices": ["a", "b"]}});
        aitasks_runtime::api::create_task(&app, &tenant, deferred.to_string().as_bytes())
            .await
            .expect("deferred");
    }

    let tokens = attach(&db, &app, scale).await;
    db.reset_statements().await;
    let started = Instant::now();
    let mut sweeps = Vec::new();
    let mut db_ms_per_sweep = Vec::new();
    let mut tick = started;
    let period = Duration::from_secs(60) / speedup;
    while tick < started + scale.run_for {
        tokio::time::sleep_until(tick.into()).await;
        let before = db.statement_time_ms("task_callbacks").await;
        sweeps.push(sweeper::sweep(&app).await);
        db_ms_per_sweep.push(db.statement_time_ms("task_callbacks").await - before);
        // The next schedule tick after this sweep ended: never two at once.
        while tick <= Instant::now() {
            tick += period;
        }
    }
    let ended = Instant::now();
    let beats = sfn.heartbeats();
    let mut gaps = longest_gaps(&tokens, &beats, started, ended);
    let heartbeat_seconds = Duration::from_secs(120) / speedup;
    let small_timed_out = gaps[scale.big_tenant..].iter().filter(|g| **g > heartbeat_seconds).count();
    let between = gaps_between_heartbeats(&tokens, &beats, ended);
    let stated: Vec<Duration> = sweeps
        .iter()
        .skip(1)
        .filter_map(|sweep| sweep.heartbeat_seconds_kept)
        .map(|seconds| Duration::from_secs(seconds) * speedup)
        .collect();
    let stated_kept_max = stated.iter().max().copied();
    let past_stated = stated_kept_max.map_or(0, |most| gaps.iter().filter(|g| **g * speedup > most).count());
    gaps.sort_unstable();
    let calls = sfn.calls();
    let accepted: usize = beats.values().map(Vec::len).sum();
    let wall = ended.duration_since(started).as_secs_f64();
    let busy_seconds: std::collections::HashSet<u64> =
        calls.iter().map(|c| c.at.saturating_duration_since(started).as_secs()).collect();
    HeartbeatFigures {
        tokens: tokens.len(),
        heartbeat_seconds: heartbeat_seconds * speedup,
        longest_gap_max: gaps.last().copied().unwrap_or_default() * speedup,
        longest_gap_p99: percentile(&gaps, 0.99) * speedup,
        longest_gap_p50: percentile(&gaps, 0.50) * speedup,
        between_max: between.last().copied().unwrap_or_default() * speedup,
        between_p99: percentile(&between, 0.99) * speedup,
        timed_out: gaps.iter().filter(|g| **g > heartbeat_seconds).count(),
        small_timed_out,
        heartbeats_per_second: accepted as f64 / wall / f64::from(speedup),
        peak_calls_per_second: sfn.peak_calls_per_second() as f64 / f64::from(speedup),
        calls_per_second_limit: scale.calls_per_second,
        most_in_flight: sfn.most_in_flight(),
        mean_calls_per_second: calls.len() as f64 / wall / f64::from(speedup),
        busy_share: busy_seconds.len() as f64 / wall.ceil().max(1.0),
        throttled: calls.iter().filter(|c| c.refused.as_deref() == Some("ThrottlingException")).count(),
        stated_kept_max,
        stated_kept_min: stated.iter().min().copied(),
        past_stated,
        sweeps,
        db_ms_per_sweep,
    }
}

/// The waiting callbacks, one task each, the big tenant's first; their tokens in that order. The
/// tasks' messages are in the queue, as a create leaves them.
async fn attach(db: &TestDb, app: &aitasks_runtime::App, scale: &HeartbeatScale) -> Vec<String> {
    let client = db.client().await;
    let small = scale.callbacks.saturating_sub(scale.big_tenant);
    let mut owners: Vec<String> = vec!["tenant-big".to_owned(); scale.big_tenant];
    owners.extend((0..small).map(|i| format!("tenant-{}", i % scale.small_tenants.max(1))));
    let mut tokens = Vec::with_capacity(owners.len());
    for (chunk_at, chunk) in owners.chunks(500).enumerate() {
        let mut by_tenant: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, owner) in chunk.iter().enumerate() {
            match by_tenant.iter_mut().find(|(t, _)| *t == owner.as_str()) {
                Some((_, items)) => items.push(i),
                None => by_tenant.push((owner, vec![i])),
            }
        }
        let mut chunk_tokens = vec![String::new(); chunk.len()];
        for (owner, items) in by_tenant {
            let tasks: Vec<_> = items
                .iter()
                .map(|i| new_task(owner, app_owner("waits"), &format!("k-{chunk_at}-{i}")))
                .collect();
            let created = store::create_tasks(&client, owner, &tasks).await.expect("create");
            let ids: Vec<_> = created.into_iter().map(|c| c.expect("created").task().id).collect();
            let owed: Vec<OwedMessage> =
                ids.iter().map(|id| OwedMessage { task_id: *id, app_id: owner.to_owned() }).collect();
            assert!(app.queues.send_tasks(&owed).await.is_empty(), "messages sent");
            let names: Vec<String> = items.iter().map(|i| format!("tok-{owner}-{chunk_at}-{i}")).collect();
            let callbacks: Vec<NewCallback<'_>> = ids
                .iter()
                .zip(&names)
                .map(|(task_id, token)| NewCallback { task_id: *task_id, kind: "step_functions", token })
                .collect();
            store::attach_callbacks(&client, &callbacks).await.expect("attach");
            for (i, name) in items.iter().zip(names) {
                chunk_tokens[*i] = name;
            }
        }
        tokens.extend(chunk_tokens);
    }
    tokens
}
