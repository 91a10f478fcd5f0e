//! Reads bounded for every tenant (issue 48): a hundred concurrent summary readers of one tenant
//! (`app-dashboards`, 100,000 tasks in the summary's window: each summary reads all it may) beside
//! a normal workload of another (`app-work`: creators each creating a task and waiting for it to
//! end by long poll, through the dev server, the SQS-compatible server and the stub provider).
//! The readers behave as the clients do: a 429 is waited out for its `Retry-After`.
//!
//! Three runs, each on a fresh stack: the workload alone; beside the readers with no read rate
//! (`AITASK_READ_RATE=0`, what there was before); beside them at the default rate. Printed: the
//! workload's create and create-to-done latencies (p50, p99) and tasks a second, the summaries
//! answered and refused a second, and the load on the database (rows it read a second, from
//! `pg_stat_database`) and on the machine (busy CPU).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_testkit::{percentile, Api, Stack};
use reqwest::Method;
use serde_json::{json, Value};

use crate::cpu::CpuMeter;
use crate::size::Size;
use crate::{row, Failure};

const READER: &str = "app-dashboards";
const WORKER: &str = "app-work";
/// The reader's tasks in the summary's default window (the 7 days before now).
const READER_TASKS: u64 = 100_000;

/// One run's figures.
struct Run {
    create_ms: Vec<f64>,
    done_ms: Vec<f64>,
    seconds: f64,
    summaries: u64,
    refused: u64,
    /// Answers of 503 UNAVAILABLE: the summaries', and the workload's creates and reads.
    unavailable: u64,
    work_unavailable: u64,
    rows_read: f64,
    cpu_busy: f64,
}

impl Run {
    fn per_second(&self, n: f64) -> f64 {
        n / self.seconds.max(0.001)
    }

    fn json(&self) -> Value {
        json!({
            "createMs": {"p50": percentile(&self.create_ms, 0.5), "p99": percentile(&self.create_ms, 0.99)},
            "doneMs": {"p50": percentile(&self.done_ms, 0.5), "p99": percentile(&self.done_ms, 0.99)},
            "tasksPerSecond": self.per_second(self.done_ms.len() as f64),
            "summariesPerSecond": self.per_second(self.summaries as f64),
            "refusedPerSecond": self.per_second(self.refused as f64),
            "unavailablePerSecond": self.per_second(self.unavailable as f64),
            "workloadUnavailable": self.work_unavailable,
            "rowsReadPerSecond": self.per_second(self.rows_read),
            "cpuBusy": self.cpu_busy,
        })
    }
}

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    let seconds = size.point(30, 10);
    let readers = size.pick(100, 100, 4);
    let creators = size.pick(8, 8, 2);
    println!(
        "\nreads: {readers} concurrent summary readers of one tenant ({READER_TASKS} tasks in its window) beside \
         {creators} creators of another, {:.0}s a run",
        seconds.as_secs_f64()
    );
    let alone = run(seconds, 0, creators, "2000").await?;
    let unlimited = run(seconds, readers, creators, "0").await?;
    let limited = run(seconds, readers, creators, "2000").await?;
    row("", &["alone".into(), "rate off".into(), "rate on".into()]);
    let runs = [&alone, &unlimited, &limited];
    let figure = |label: &str, value: &dyn Fn(&Run) -> f64, decimals: usize| {
        row(label, &runs.map(|r| format!("{:.*}", decimals, value(r))));
    };
    figure("workload: create p50 ms", &|r| percentile(&r.create_ms, 0.5), 1);
    figure("workload: create p99 ms", &|r| percentile(&r.create_ms, 0.99), 1);
    figure("workload: create to done p50 ms", &|r| percentile(&r.done_ms, 0.5), 1);
    figure("workload: create to done p99 ms", &|r| percentile(&r.done_ms, 0.99), 1);
    figure("workload: tasks done/s", &|r| r.per_second(r.done_ms.len() as f64), 1);
    figure("readers: summaries answered/s", &|r| r.per_second(r.summaries as f64), 1);
    figure("readers: refused (429)/s", &|r| r.per_second(r.refused as f64), 1);
    figure("readers: unavailable (503)/s", &|r| r.per_second(r.unavailable as f64), 1);
    figure("workload: answers 503 (all run)", &|r| r.work_unavailable as f64, 0);
    figure("database: rows read/s (thousands)", &|r| r.per_second(r.rows_read) / 1000.0, 0);
    figure("machine: busy CPUs (of all)", &|r| r.cpu_busy, 2);
    Ok(json!({
        "readers": readers, "creators": creators, "readerTasks": READER_TASKS, "seconds": seconds.as_secs_f64(),
        "alone": alone.json(), "rateOff": unlimited.json(), "rateOn": limited.json(),
    }))
}

/// One run on a fresh stack: `readers` summary readers and `creators` creators for `length`,
/// with `AITASK_READ_RATE=rate`.
async fn run(length: Duration, readers: usize, creators: usize, rate: &str) -> Result<Run, Failure> {
    let stack = Stack::start_with(&[
        ("RUST_LOG", "warn"),
        ("AITASK_METRICS", "off"),
        ("AITASK_LOCAL_POLLERS", "4"),
        ("AITASK_DB_POOL_SIZE", "32"),
        ("AITASK_READ_RATE", rate),
    ])
    .await;
    stack
        .db
        .sql(&format!(
            "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
                 max_attempts, status, attempts, output, usage, created_at, started_at, completed_at) \
             SELECT gen_random_uuid(), '{READER}', 's' || (n % 100), 'step', 'k' || n, 'classify', '{{}}', \
                 repeat('0', 64), CASE WHEN n % 2 = 0 THEN 'default' ELSE 'other' END, 3, 'succeeded', 1, '\"a\"', \
                 '{{\"inputTokens\": 11, \"outputTokens\": 7}}', now() - n * interval '5 seconds', now(), now() \
             FROM generate_series(1, {READER_TASKS}) n; \
             ANALYZE tasks;"
        ))
        .await;
    let until = Instant::now() + length;
    let (summaries, refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (unavailable, work_unavailable) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (creates, dones) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let rows_before = rows_read(&stack).await?;
    let meter = CpuMeter::start()?;
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..readers {
        let (api, summaries, refused) = (stack.api(READER), summaries.clone(), refused.clone());
        let unavailable = unavailable.clone();
        workers.push(tokio::spawn(async move {
            read_summaries(api, until, summaries, refused, unavailable).await
        }));
    }
    for creator in 0..creators {
        let (api, creates, dones) = (stack.api(WORKER), creates.clone(), dones.clone());
        let unavailable = work_unavailable.clone();
        workers
            .push(tokio::spawn(async move { work(api, creator, until, creates, dones, unavailable).await }));
    }
    for worker in workers {
        worker.await??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu_busy = meter.busy_seconds()? / seconds;
    // The backends' counters reach pg_stat_database when their transactions end, within a second.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let rows_read = rows_read(&stack).await? - rows_before;
    let sorted = |values: &Arc<Mutex<Vec<f64>>>| {
        let mut values = values.lock().unwrap_or_else(|p| p.into_inner()).clone();
        values.sort_by(f64::total_cmp);
        values
    };
    Ok(Run {
        create_ms: sorted(&creates),
        done_ms: sorted(&dones),
        seconds,
        summaries: summaries.load(Ordering::Relaxed),
        refused: refused.load(Ordering::Relaxed),
        unavailable: unavailable.load(Ordering::Relaxed),
        work_unavailable: work_unavailable.load(Ordering::Relaxed),
        rows_read,
        cpu_busy,
    })
}

/// A dashboard: the summary again and again, a refusal waited out for its `Retry-After`.
async fn read_summaries(
    api: Api,
    until: Instant,
    summaries: Arc<AtomicU64>,
    refused: Arc<AtomicU64>,
    unavailable: Arc<AtomicU64>,
) -> Result<(), Failure> {
    while Instant::now() < until {
        let answer = api.send(Method::GET, "/v1/summary", None).await;
        match answer.status {
            200 => {
                summaries.fetch_add(1, Ordering::Relaxed);
            }
            429 => {
                refused.fetch_add(1, Ordering::Relaxed);
                let wait: u64 = answer.header("retry-after").and_then(|v| v.parse().ok()).unwrap_or(1);
                let left = until.saturating_duration_since(Instant::now());
                tokio::time::sleep(Duration::from_secs(wait).min(left)).await;
            }
            // The database's pool was not free in time: what a dashboard without a rate does to
            // the others. Tried again after the clients' first backoff.
            503 => {
                unavailable.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            status => return Err(format!("the summary answered {status}: {}", answer.body).into()),
        }
    }
    Ok(())
}

/// The other tenant's normal work: create a task, wait for it to end, again.
async fn work(
    api: Api,
    creator: usize,
    until: Instant,
    creates: Arc<Mutex<Vec<f64>>>,
    dones: Arc<Mutex<Vec<f64>>>,
    unavailable: Arc<AtomicU64>,
) -> Result<(), Failure> {
    let mut n = 0;
    while Instant::now() < until {
        n += 1;
        let body = json!({"owner": {"scopeId": "work"}, "stepKey": "label", "effectKey": format!("w{creator}-{n}"),
            "modelId": "default",
            "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                        "choices": ["pos", "neg"]}});
        let started = Instant::now();
        let (status, task) = api.post("/v1/tasks", &body).await;
        if status == 503 {
            unavailable.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        if status != 201 {
            return Err(format!("a create answered {status}: {task}").into());
        }
        creates.lock().unwrap_or_else(|p| p.into_inner()).push(started.elapsed().as_secs_f64() * 1000.0);
        let id = task["id"].as_str().ok_or("no task id")?.to_owned();
        loop {
            let (status, task) = api.get(&format!("/v1/tasks/{id}?wait=20")).await;
            if status == 503 {
                unavailable.fetch_add(1, Ordering::Relaxed);
                if Instant::now() > until + Duration::from_secs(120) {
                    return Err(
                        format!("task {id}: its reads answered 503 for two minutes past the run").into()
                    );
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
            if status != 200 {
                return Err(format!("a read of the task answered {status}: {task}").into());
            }
            if matches!(task["status"].as_str(), Some("succeeded" | "failed" | "canceled")) {
                break;
            }
        }
        dones.lock().unwrap_or_else(|p| p.into_inner()).push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(())
}

/// Rows the stack's database has read so far (sequential and index reads).
async fn rows_read(stack: &Stack) -> Result<f64, Failure> {
    let row = stack
        .db
        .client()
        .await
        .query_one(
            "SELECT (tup_returned + tup_fetched)::float8 FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await?;
    Ok(row.get(0))
}
