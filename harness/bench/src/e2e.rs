//! End to end: tasks created over HTTP through the dev server (release build in `make bench`),
//! delivered by the SQS-compatible server, worked on against a stub provider that answers at
//! once, and settled in Postgres; each measured from the start of its create call to the arrival
//! of its completion event on the events queue.
//!
//! Two loads:
//!
//! - **light**: one client, each task created once the previous one's event arrived. Its latency
//!   (p50, p99) is printed beside the sum of its parts, each read for every task from the same
//!   clock (this machine's): request to stored (`created_at`), stored to claimed (`started_at`:
//!   the message sent, delivered, polled), claimed to settled (`completed_at`: the worker, the
//!   provider call within it), settled to the event received (the publish, the queue, the
//!   consumer's receive);
//! - **saturation**: 1000 tasks from 32 concurrent creators, run twice side by side:
//!   uninstrumented (warn-level logs, `AITASK_METRICS=off`, no traces) and as deployed (JSON info
//!   logs with a request and a settled line each, the EMF documents, X-Ray segments to a daemon
//!   socket on loopback), after a warm-up, alternating, twice. The difference is the
//!   instrumentation's cost, per task in the dev server's CPU time.
//!
//! In both, the worker's overhead a task: claim to settle (`completed_at - started_at`) minus the
//! provider call (its `latencyMs`, whole milliseconds), and its parts as the worker reports them
//! in each settlement's EMF document (`ClaimMs`, `GateMs`, `VisibilityMs`, `SettleMs`) and each
//! publish's (`EventMs`, `CallbacksMs`, after the settlement: not in the overhead).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aitasks_testkit::{percentile, Api, Stack};
use serde_json::{json, Value};

use crate::size::Size;
use crate::{row, Failure};

/// When each task's completion event arrived, as a consumer of the events queue sees it.
type Arrivals = Arc<Mutex<HashMap<String, SystemTime>>>;

fn seconds(at: SystemTime) -> f64 {
    at.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or_default()
}

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    let total: usize = size.pick(1000, 300, 10);
    let creators = size.pick(32, 32, 4);
    let rounds = size.pick(2, 2, 1);
    let light_tasks = size.pick(200, 50, 5);
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
    let light = light_load(light_tasks).await?;
    // A warm-up run first (Postgres' caches, the queue server's JIT), then the two sides in
    // turn: each figure below is the mean of its side's runs.
    run(total / 3, creators, &plain).await?;
    let mut runs = Vec::new();
    for _ in 0..rounds {
        runs.push((run(total, creators, &plain).await?, run(total, creators, &instrumented).await?));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let segments = sink.join().unwrap_or_default() / rounds as u64;
    let off = mean(runs.iter().map(|(off, _)| off));
    let on = mean(runs.iter().map(|(_, on)| on));

    print_light(&light);
    println!(
        "\nend to end under saturation: {total} tasks, {creators} HTTP creators, dev server + SQS-compatible server + Postgres + stub provider"
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
    println!("the worker's parts under saturation (instrumented runs, mean ms a task):");
    print_parts(&on);
    let mut report = on.clone();
    report["instrumentation"] = json!({"off": off, "on": on, "segments": segments,
        "cpuMsPerTask": cost("serverCpuMsPerTask"), "p50Ms": cost("p50Ms")});
    report["lightLoad"] = light;
    Ok(report)
}

const PARTS: [(&str, &str); 6] = [
    ("claim", "claimMs"),
    ("gate (provider limits)", "gateMs"),
    ("visibility (SQS, beside the call)", "visibilityMs"),
    ("settle (group commit, its wait included)", "settleMs"),
    ("event (after the settle: queue and bus)", "eventMs"),
    ("callbacks (after: delivered mark, owed callbacks)", "callbacksMs"),
];

fn print_parts(figures: &Value) {
    let ms = |key: &str| figures[key].as_f64().unwrap_or(f64::NAN);
    for (label, key) in PARTS {
        row(&format!("  {label}"), &[format!("{:.3}", ms(key))]);
    }
    let inside = ms("claimMs") + ms("gateMs") + ms("settleMs");
    row("  claim + gate + settle", &[format!("{inside:.3}")]);
    row(
        "  overhead (claim to settle minus the call, from the rows)",
        &[format!("{:.3}", ms("workerOverheadMs"))],
    );
}

fn print_light(light: &Value) {
    let ms = |key: &str| light[key].as_f64().unwrap_or(f64::NAN);
    println!(
        "\nend to end at light load: {} tasks, 1 client, each created once the one before was answered by its event",
        light["tasks"]
    );
    row("", &["ms".into()]);
    row("latency p50", &[format!("{:.2}", ms("p50Ms"))]);
    row("latency p99", &[format!("{:.2}", ms("p99Ms"))]);
    row("latency mean", &[format!("{:.2}", ms("meanMs"))]);
    let mut sum = 0.0;
    for (label, key) in [
        ("  request to stored (HTTP, admission, insert)", "toStoredMs"),
        ("  stored to claimed (message sent, polled, claim)", "toClaimedMs"),
        ("  claimed to settled (worker, provider call included)", "toSettledMs"),
        ("  settled to event received (publish, queue, consumer)", "toEventMs"),
    ] {
        sum += ms(key);
        row(label, &[format!("{:.2}", ms(key))]);
    }
    row("sum of the parts (means)", &[format!("{sum:.2}")]);
    row("provider call (stub)", &[format!("{:.2}", ms("providerMs"))]);
    row("worker overhead (target < 2 ms)", &[format!("{:.2}", ms("workerOverheadMs"))]);
    println!("the worker's parts at light load (mean ms a task):");
    print_parts(light);
}

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

/// Consumers of the events queue noting when each task's event arrived, until `total` did.
fn consume(stack: &Stack, total: usize) -> (Arrivals, Vec<tokio::task::JoinHandle<()>>) {
    let arrived: Arrivals = Arc::default();
    let consumers = (0..4)
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
                    let now = SystemTime::now();
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
    (arrived, consumers)
}

fn create_body(n: usize) -> Value {
    json!({"owner": {"scopeId": format!("s{}", n % 16)}, "stepKey": "bench",
        "effectKey": format!("e2e-{n}"), "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                    "choices": ["pos", "neg"]}})
}

/// Create task `n`; its id.
async fn create(api: &Api, n: usize) -> Result<String, Failure> {
    let (status, task) = api.post("/v1/tasks", &create_body(n)).await;
    if status != 201 {
        return Err(format!("create answered {status}: {task}").into());
    }
    Ok(task["id"].as_str().ok_or("no task id")?.to_owned())
}

/// The worker's overhead (claim to settle minus the call) and the provider call, mean ms a
/// succeeded task.
async fn overhead(stack: &Stack) -> Result<(f64, f64), Failure> {
    let row = stack
        .db
        .client()
        .await
        .query_one(
            "SELECT COALESCE(avg(extract(epoch FROM completed_at - started_at) * 1000 \
             - (usage ->> 'latencyMs')::float8), 0)::float8, \
             COALESCE(avg((usage ->> 'latencyMs')::float8), 0)::float8 FROM tasks WHERE status = 'succeeded'",
            &[],
        )
        .await?;
    Ok((row.get(0), row.get(1)))
}

/// The worker's parts from the dev server's EMF documents: the mean of each settlement's, and
/// of each published event's (a publish of n events counts n times).
fn parts(stack: &Stack) -> Value {
    let (mut settled, mut sums) = (0.0, [0.0; 4]);
    let (mut events, mut event_ms, mut callbacks_ms) = (0.0, 0.0, 0.0);
    for line in stack.server.json_lines() {
        if line.get("_aws").is_none() {
            continue;
        }
        if line.get("Settlements").is_some() {
            if line["ClaimMs"].is_number() {
                settled += 1.0;
                for (sum, key) in sums.iter_mut().zip(["ClaimMs", "GateMs", "VisibilityMs", "SettleMs"]) {
                    *sum += line[key].as_f64().unwrap_or(0.0);
                }
            }
        } else if let Some(n) = line["EventsPublished"].as_f64() {
            events += n;
            event_ms += n * line["EventMs"].as_f64().unwrap_or(0.0);
            callbacks_ms += n * line["CallbacksMs"].as_f64().unwrap_or(0.0);
        }
    }
    let per = |sum: f64, n: f64| if n > 0.0 { json!(sum / n) } else { Value::Null };
    json!({"claimMs": per(sums[0], settled), "gateMs": per(sums[1], settled), "visibilityMs": per(sums[2], settled),
           "settleMs": per(sums[3], settled), "eventMs": per(event_ms, events), "callbacksMs": per(callbacks_ms, events),
           "settlementsReported": settled, "eventsReported": events})
}

fn stack_env<'a>(telemetry: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut env = vec![
        ("AITASK_LOCAL_POLLERS", "4"),
        ("AITASK_DB_POOL_SIZE", "32"),
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
    ];
    env.extend_from_slice(telemetry);
    env
}

/// One client, one task at a time: each created once the one before was answered by its event.
async fn light_load(total: usize) -> Result<Value, Failure> {
    let stack = Stack::start_with(&stack_env(&[("RUST_LOG", "warn")])).await;
    let api = stack.api("bench-app");
    let (arrived, consumers) = consume(&stack, total);
    let mut started: Vec<(String, SystemTime)> = Vec::with_capacity(total);
    for n in 0..total {
        let at = SystemTime::now();
        let id = create(&api, n).await?;
        let until = Instant::now() + Duration::from_secs(30);
        while !arrived.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&id) {
            if Instant::now() > until {
                return Err(format!("task {id}'s completion event did not arrive in 30 s").into());
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        started.push((id, at));
    }
    for consumer in consumers {
        consumer.abort();
    }
    let arrived = arrived.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let client = stack.db.client().await;
    let (mut latencies, mut parts_sum) = (Vec::with_capacity(total), [0.0; 4]);
    for (id, at) in &started {
        let uuid: uuid::Uuid = id.parse()?;
        let row = client
            .query_one(
                "SELECT extract(epoch FROM created_at)::float8, extract(epoch FROM started_at)::float8, \
                 extract(epoch FROM completed_at)::float8 FROM tasks WHERE id = $1",
                &[&uuid],
            )
            .await?;
        let (created, claimed, settled): (f64, f64, f64) = (row.get(0), row.get(1), row.get(2));
        let (begun, received) = (seconds(*at), seconds(arrived[id]));
        latencies.push((received - begun) * 1000.0);
        for (sum, part) in parts_sum.iter_mut().zip([
            created - begun,
            claimed - created,
            settled - claimed,
            received - settled,
        ]) {
            *sum += part * 1000.0;
        }
    }
    let mean_latency = latencies.iter().sum::<f64>() / total.max(1) as f64;
    latencies.sort_by(f64::total_cmp);
    let (worker_overhead, provider_ms) = overhead(&stack).await?;
    let n = total.max(1) as f64;
    let mut figures = parts(&stack);
    for (key, value) in [
        ("tasks", total as f64),
        ("p50Ms", percentile(&latencies, 0.5)),
        ("p99Ms", percentile(&latencies, 0.99)),
        ("meanMs", mean_latency),
        ("toStoredMs", parts_sum[0] / n),
        ("toClaimedMs", parts_sum[1] / n),
        ("toSettledMs", parts_sum[2] / n),
        ("toEventMs", parts_sum[3] / n),
        ("workerOverheadMs", worker_overhead),
        ("providerMs", provider_ms),
    ] {
        figures[key] = json!(value);
    }
    Ok(figures)
}

/// One run of `total` tasks from `creators` concurrent clients with these variables; its figures.
async fn run(total: usize, creators: usize, telemetry: &[(&str, &str)]) -> Result<Value, Failure> {
    let stack = Stack::start_with(&stack_env(telemetry)).await;
    let pid = stack.server.pid().ok_or("the dev server has no pid")?;
    let cpu_before = cpu_ms(pid);
    let api = stack.api("bench-app");
    let started_at: Arc<Mutex<HashMap<String, SystemTime>>> = Arc::default();
    let (arrived, consumers) = consume(&stack, total);

    let begun = SystemTime::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers = (0..creators).map(|_| {
        let (api, started_at, next) = (api.clone(), started_at.clone(), next.clone());
        tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= total {
                    return Ok::<(), Failure>(());
                }
                let at = SystemTime::now();
                let id = create(&api, n).await?;
                started_at.lock().unwrap_or_else(|p| p.into_inner()).insert(id, at);
            }
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker??;
    }
    let until = Instant::now() + Duration::from_secs(120);
    while arrived.lock().unwrap_or_else(|p| p.into_inner()).len() < total && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = begun.elapsed().unwrap_or_default();
    for consumer in consumers {
        consumer.abort();
    }

    let started_at = started_at.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let arrived = arrived.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut latencies: Vec<f64> = started_at
        .iter()
        .filter_map(|(id, at)| arrived.get(id).map(|done| (seconds(*done) - seconds(*at)) * 1000.0))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let last_event = arrived.values().max().copied().unwrap_or_else(SystemTime::now);
    let span = (seconds(last_event) - seconds(begun)).max(f64::EPSILON);
    let (worker_overhead, provider_ms) = overhead(&stack).await?;
    let server_cpu_ms = cpu_ms(pid) - cpu_before;
    let log_bytes = std::fs::metadata(&stack.server.log).map(|m| m.len()).unwrap_or(0);
    if latencies.len() < total {
        return Err(format!(
            "only {} of {total} completion events arrived (elapsed {elapsed:?})",
            latencies.len()
        )
        .into());
    }
    let mut figures = json!({"tasks": total, "tasksPerSecond": latencies.len() as f64 / span,
              "p50Ms": percentile(&latencies, 0.5), "p99Ms": percentile(&latencies, 0.99),
              "workerOverheadMs": worker_overhead, "providerMs": provider_ms,
              "serverCpuMsPerTask": server_cpu_ms / total as f64,
              "logBytesPerTask": log_bytes as f64 / total as f64});
    if let (Value::Object(figures), Value::Object(parts)) = (&mut figures, parts(&stack)) {
        figures.extend(parts);
    }
    Ok(figures)
}
