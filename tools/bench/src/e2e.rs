//! End to end: 1000 tasks created over HTTP through the dev server (release build), delivered
//! by the SQS-compatible server, worked on against a stub provider that answers at once, and
//! settled in Postgres; each measured from the start of its create call to the arrival of its
//! completion event on the events queue. Also the processing overhead per task: the time a
//! worker held the task minus the provider call.
//!
//! Run twice, side by side: uninstrumented (warn-level logs, `AITASK_METRICS=off`, no traces)
//! and as deployed (JSON info logs with a request and a settled line each, the EMF documents,
//! X-Ray segments to a daemon socket on loopback), after a warm-up, alternating, twice. The
//! difference is the instrumentation's cost, per task in the dev server's CPU time (the figure
//! to read: latency on this shared machine moves more between runs than the difference).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_testkit::{percentile, Stack};
use serde_json::{json, Value};

use crate::{row, Failure};

const CREATORS: usize = 32;

pub(crate) async fn section(quick: bool) -> Result<Value, Failure> {
    let total: usize = if quick { 300 } else { 1000 };
    // A socket that takes the segments, as the daemon would, and drops them.
    let daemon = std::net::UdpSocket::bind("127.0.0.1:0")?;
    let daemon_address = daemon.local_addr()?.to_string();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sink = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut buffer = vec![0u8; 65_536];
            let mut received = 0u64;
            daemon.set_read_timeout(Some(Duration::from_millis(200))).ok();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if daemon.recv(&mut buffer).is_ok() {
                    received += 1;
                }
            }
            received
        })
    };
    let plain = [("RUST_LOG", "warn"), ("AITASK_METRICS", "off")];
    let instrumented = [
        ("RUST_LOG", "info"),
        ("AITASK_LOG_FORMAT", "json"),
        ("AWS_XRAY_DAEMON_ADDRESS", daemon_address.as_str()),
    ];
    // A warm-up run first (Postgres' caches, the queue server's JIT), then the two sides in
    // turn, twice: each figure below is the mean of its side's two runs.
    run(total / 3, &plain).await?;
    let mut runs = Vec::new();
    for _ in 0..ROUNDS {
        runs.push((run(total, &plain).await?, run(total, &instrumented).await?));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let segments = sink.join().unwrap_or_default() / ROUNDS as u64;
    let off = mean(runs.iter().map(|(off, _)| off));
    let on = mean(runs.iter().map(|(_, on)| on));

    println!(
        "\nend to end: {total} tasks, {CREATORS} HTTP creators, dev server (release) + SQS-compatible server + Postgres + stub provider"
    );
    row("instrumentation", &["off".into(), "on".into()]);
    let both = |key: &str, decimals: usize| {
        [&off, &on].map(|r| format!("{:.*}", decimals, r[key].as_f64().unwrap_or(f64::NAN))).to_vec()
    };
    row("tasks/s (create to completion event)", &both("tasksPerSecond", 0));
    row("latency p50 ms", &both("p50Ms", 1));
    row("latency p99 ms", &both("p99Ms", 1));
    row("worker overhead per task, provider call excluded ms", &both("workerOverheadMs", 2));
    row("dev server CPU per task ms", &both("serverCpuMsPerTask", 3));
    row("provider call (stub) ms", &both("providerMs", 2));
    row("log bytes per task", &both("logBytesPerTask", 0));
    row("X-Ray segments received per run", &["0".into(), segments.to_string()]);
    let cost = |key: &str| on[key].as_f64().unwrap_or(0.0) - off[key].as_f64().unwrap_or(0.0);
    row(
        "instrumentation cost per task: CPU ms / p50 ms",
        &[format!("{:.3}", cost("serverCpuMsPerTask")), format!("{:.2}", cost("p50Ms"))],
    );
    let mut report = on.clone();
    report["instrumentation"] = json!({"off": off, "on": on, "segments": segments,
        "cpuMsPerTask": cost("serverCpuMsPerTask"), "p50Ms": cost("p50Ms")});
    Ok(report)
}

const ROUNDS: usize = 2;

/// The mean of each numeric figure over `runs`.
fn mean<'a>(runs: impl Iterator<Item = &'a Value>) -> Value {
    let runs: Vec<&Value> = runs.collect();
    let mut out = serde_json::Map::new();
    if let Some(Value::Object(first)) = runs.first() {
        for key in first.keys() {
            let sum: f64 = runs.iter().filter_map(|r| r[key].as_f64()).sum();
            out.insert(key.clone(), json!(sum / runs.len() as f64));
        }
    }
    Value::Object(out)
}

/// The dev server's user + system CPU time so far, in milliseconds (`/proc/<pid>/stat`, in
/// clock ticks of 10 ms: USER_HZ is 100 on Linux).
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) are split by whitespace.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
    let fields: Vec<f64> = after.split_whitespace().map(|f| f.parse().unwrap_or(0.0)).collect();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    (fields.get(11).copied().unwrap_or(0.0) + fields.get(12).copied().unwrap_or(0.0)) * 10.0
}

/// One run of `total` tasks with these variables; its figures.
async fn run(total: usize, telemetry: &[(&str, &str)]) -> Result<Value, Failure> {
    let mut env = vec![
        ("AITASK_LOCAL_POLLERS", "4"),
        ("AITASK_DB_POOL_SIZE", "32"),
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
    ];
    env.extend_from_slice(telemetry);
    let stack = Stack::start_with(&env).await;
    let pid = stack.server.pid().ok_or("the dev server has no pid")?;
    let cpu_before = cpu_ms(pid);
    let api = stack.api("bench-app");
    let started_at: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let arrived: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();

    // Completion events, as a consumer of the events queue sees them.
    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let (sqs, queue, arrived) =
                (stack.queues.sqs.clone(), stack.queues.events.clone(), arrived.clone());
            tokio::spawn(async move {
                while arrived.lock().unwrap_or_else(|p| p.into_inner()).len() < total {
                    let Ok(out) = sqs
                        .receive_message()
                        .queue_url(&queue)
                        .max_number_of_messages(10)
                        .wait_time_seconds(1)
                        .send()
                        .await
                    else {
                        continue;
                    };
                    let now = Instant::now();
                    for message in out.messages() {
                        if let Ok(event) = serde_json::from_str::<Value>(message.body().unwrap_or_default()) {
                            if let Some(id) = event["taskId"].as_str() {
                                arrived
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .entry(id.to_owned())
                                    .or_insert(now);
                            }
                        }
                        if let Some(receipt) = message.receipt_handle() {
                            let _ =
                                sqs.delete_message().queue_url(&queue).receipt_handle(receipt).send().await;
                        }
                    }
                }
            })
        })
        .collect();

    let begun = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let creators = (0..CREATORS).map(|_| {
        let (api, started_at, next) = (api.clone(), started_at.clone(), next.clone());
        tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= total {
                    return Ok::<(), Failure>(());
                }
                let body = json!({"owner": {"scopeId": format!("s{}", n % 16)}, "stepKey": "bench",
                    "effectKey": format!("e2e-{n}"), "modelId": "default",
                    "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                                "choices": ["pos", "neg"]}});
                let at = Instant::now();
                let (status, task) = api.post("/v1/tasks", &body).await;
                if status != 201 {
                    return Err(format!("create answered {status}: {task}").into());
                }
                let id = task["id"].as_str().ok_or("no task id")?.to_owned();
                started_at.lock().unwrap_or_else(|p| p.into_inner()).insert(id, at);
            }
        })
    });
    for creator in futures::future::join_all(creators).await {
        creator??;
    }
    let until = Instant::now() + Duration::from_secs(120);
    while arrived.lock().unwrap_or_else(|p| p.into_inner()).len() < total && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = begun.elapsed();
    for consumer in consumers {
        consumer.abort();
    }

    let started_at = started_at.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let arrived = arrived.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut latencies: Vec<f64> = started_at
        .iter()
        .filter_map(|(id, at)| arrived.get(id).map(|done| (*done - *at).as_secs_f64() * 1000.0))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let last_event = arrived.values().max().copied().unwrap_or_else(Instant::now);
    let span = (last_event - begun).as_secs_f64().max(f64::EPSILON);
    let overhead: f64 = stack
        .db
        .client()
        .await
        .query_one(
            "SELECT COALESCE(avg(extract(epoch FROM completed_at - started_at) * 1000 \
             - (usage ->> 'latencyMs')::float8), 0)::float8 FROM tasks WHERE status = 'succeeded'",
            &[],
        )
        .await?
        .get(0);
    let provider_ms: f64 = stack
        .db
        .client()
        .await
        .query_one("SELECT COALESCE(avg((usage ->> 'latencyMs')::float8), 0)::float8 FROM tasks", &[])
        .await?
        .get(0);

    let server_cpu_ms = cpu_ms(pid) - cpu_before;
    let log_bytes = std::fs::metadata(&stack.server.log).map(|m| m.len()).unwrap_or(0);
    if latencies.len() < total {
        return Err(format!(
            "only {} of {total} completion events arrived (elapsed {elapsed:?})",
            latencies.len()
        )
        .into());
    }
    Ok(json!({"tasks": total, "tasksPerSecond": latencies.len() as f64 / span,
              "p50Ms": percentile(&latencies, 0.5), "p99Ms": percentile(&latencies, 0.99),
              "workerOverheadMs": overhead, "providerMs": provider_ms,
              "serverCpuMsPerTask": server_cpu_ms / total as f64,
              "logBytesPerTask": log_bytes as f64 / total as f64}))
}
