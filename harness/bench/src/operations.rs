//! Acting on many tasks (issue 49): one tenant's operation over 100,000 tasks, through the dev
//! server's API at real time (the one-minute sweep schedule, as deployed), in two actions:
//! - **replay**: 100,000 failed tasks of `app-ops` replayed by one `POST /v1/operations`;
//! - **cancel**: 100,000 queued tasks of `app-ops` canceled by one.
//!
//! Each action runs twice, each on a fresh stack. **Quiet** (over a tenth of the tasks): no
//! worker polls the queue
//! (`AITASK_LOCAL_POLLERS=0`), so every statement the database receives while the operation runs
//! is the operation's (and the sweeps'): statements per task acted on. **Beside a workload**:
//! another tenant (`app-work`) keeps creating tasks and waiting for each by long poll, as
//! `reads` does, for a while before the operation and while it runs; its create-to-done latency
//! before and during is what the workers saw meanwhile. A replay's new tasks are run by the
//! workers too (the stub provider answers them), and the time until the last of them ended is
//! printed beside the operation's own.
//!
//! The tasks acted on are written straight into the database first: the setup, not what is
//! measured (a queued one's message is not sent, so no worker runs it before the cancel).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_testkit::{percentile, Api, Stack};
use serde_json::{json, Value};

use crate::size::Size;
use crate::{row, Failure};

const OPS: &str = "app-ops";
const WORKER: &str = "app-work";

#[derive(Clone, Copy, PartialEq)]
enum Action {
    Replay,
    Cancel,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Replay => "replay",
            Action::Cancel => "cancel",
        }
    }
}

/// One operation's run.
struct Run {
    /// From the POST to the operation's `done`.
    seconds: f64,
    operation: Value,
    statements_per_task: Option<f64>,
    /// The replays' end: from the POST until the last replay ended (beside the workload only).
    replays_ended_seconds: Option<f64>,
    before_ms: Vec<f64>,
    during_ms: Vec<f64>,
}

impl Run {
    fn json(&self, tasks: u64) -> Value {
        let latency = |values: &[f64]| json!({"tasks": values.len(), "p50": percentile(values, 0.5), "p99": percentile(values, 0.99)});
        json!({
            "seconds": self.seconds,
            "tasksPerSecond": tasks as f64 / self.seconds.max(0.001),
            "operation": self.operation,
            "statementsPerTask": self.statements_per_task,
            "replaysEndedSeconds": self.replays_ended_seconds,
            "workloadBeforeMs": latency(&self.before_ms),
            "workloadDuringMs": latency(&self.during_ms),
        })
    }
}

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    let tasks: u64 = size.pick(100_000, 20_000, 300);
    // Statements per task are the same per task at any count: the quiet run, which measures
    // them, acts on a tenth.
    let quiet_tasks: u64 = size.pick(10_000, 2_000, 300);
    let creators = size.pick(4, 4, 1);
    let before = size.point(30, 10);
    println!(
        "\noperations: one tenant's operation over {tasks} tasks through the API, on the one-minute sweep schedule, \
         quiet and beside {creators} creators of another tenant"
    );
    let mut report = serde_json::Map::new();
    // BENCH_OPERATIONS=cancel (or replay) runs that one alone.
    let only = std::env::var("BENCH_OPERATIONS").unwrap_or_default();
    for action in [Action::Replay, Action::Cancel] {
        if !only.is_empty() && only != action.name() {
            continue;
        }
        let quiet = run(action, quiet_tasks, 0, before).await?;
        let loaded = run(action, tasks, creators, before).await?;
        let name = action.name();
        row(name, &[format!("quiet, {quiet_tasks}"), format!("beside work, {tasks}")]);
        row(
            "  operation: seconds to done",
            &[format!("{:.1}", quiet.seconds), format!("{:.1}", loaded.seconds)],
        );
        row(
            "  operation: tasks acted on/s",
            &[
                format!("{:.0}", quiet_tasks as f64 / quiet.seconds.max(0.001)),
                format!("{:.0}", tasks as f64 / loaded.seconds.max(0.001)),
            ],
        );
        let counts = |run: &Run| {
            let op = &run.operation;
            format!("{}/{}/{}/{}", op["matched"], op["done"], op["skipped"], op["failed"])
        };
        row("  matched/done/skipped/failed", &[counts(&quiet), counts(&loaded)]);
        row(
            "  statements per task (quiet)",
            &[quiet.statements_per_task.map_or("-".into(), |s| format!("{s:.2}")), "-".into()],
        );
        if action == Action::Replay {
            row(
                "  replays all ended, s from the POST",
                &["-".into(), loaded.replays_ended_seconds.map_or("-".into(), |s| format!("{s:.1}"))],
            );
        }
        let p = |values: &[f64], q: f64| format!("{:.0}", percentile(values, q));
        row(
            "  other tenant: create to done p50 ms, before / during",
            &["-".into(), format!("{} / {}", p(&loaded.before_ms, 0.5), p(&loaded.during_ms, 0.5))],
        );
        row(
            "  other tenant: create to done p99 ms, before / during",
            &["-".into(), format!("{} / {}", p(&loaded.before_ms, 0.99), p(&loaded.during_ms, 0.99))],
        );
        report
            .insert(name.into(), json!({"quiet": quiet.json(quiet_tasks), "besideWork": loaded.json(tasks)}));
    }
    Ok(json!({"tasks": tasks, "quietTasks": quiet_tasks, "creators": creators, "runs": report}))
}

/// One operation of `action` over `tasks` tasks on a fresh stack, with `creators` of another
/// tenant working for `before` first and then while it runs (none: quiet, and no worker either).
async fn run(action: Action, tasks: u64, creators: usize, before: Duration) -> Result<Run, Failure> {
    let pollers = if creators == 0 { "0" } else { "2" };
    let stack = Stack::start_with(&[
        ("RUST_LOG", "warn"),
        ("AITASK_METRICS", "off"),
        ("AITASK_LOCAL_POLLERS", pollers),
        ("AITASK_DB_POOL_SIZE", "16"),
        // As deployed: one sweep a minute continues what a POST left.
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
        ("AITASK_UNSENT_GRACE_MS", "60000"),
    ])
    .await;
    seed(&stack, action, tasks).await;

    // The other tenant's work: `before` alone, then on until the operation is done.
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for creator in 0..creators {
        let (api, done, stop) = (stack.api(WORKER), done.clone(), stop.clone());
        workers.push(tokio::spawn(async move { work(api, creator, stop, done).await }));
    }
    if creators > 0 {
        tokio::time::sleep(before).await;
    }
    let split = Instant::now();

    stack.db.reset_statements().await;
    let api = stack.api(OPS);
    let filter = match action {
        Action::Replay => json!({"scopeId": "ops", "status": ["failed"]}),
        Action::Cancel => json!({"scopeId": "ops", "status": ["queued", "running"]}),
    };
    let started = Instant::now();
    let (status, operation) =
        api.post("/v1/operations", &json!({"action": action.name(), "filter": filter})).await;
    if status != 202 {
        return Err(format!("POST /v1/operations answered {status}: {operation}").into());
    }
    let id = operation["id"].as_str().ok_or("the operation has no id")?.to_owned();
    // Its progress read twice a second, as the console follows it.
    let mut look = tokio::time::interval(Duration::from_millis(500));
    let operation = loop {
        look.tick().await;
        let (status, operation) = api.get(&format!("/v1/operations/{id}")).await;
        if status != 200 {
            return Err(format!("GET /v1/operations/{id} answered {status}: {operation}").into());
        }
        if operation["state"] != "running" {
            break operation;
        }
        if started.elapsed() > Duration::from_secs(3_600) {
            return Err(format!("the operation ran for an hour: {operation}").into());
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let statements_per_task =
        (creators == 0).then_some(stack.db.statements_seen().await as f64 / tasks.max(1) as f64);
    // Every task it matched acted on or skipped with a reason; a replay matches every seeded task.
    // (Beside workers, the sweeper restores the seeded queued tasks' unsent messages and the
    // workers run some before the cancel reaches them: those no longer match.)
    let count = |key: &str| operation[key].as_u64().unwrap_or(0);
    let accounted = count("done") + count("skipped") + count("failed") == count("matched");
    let all_matched = action == Action::Cancel || count("matched") == tasks;
    if operation["state"] != "done" || !accounted || !all_matched {
        return Err(format!("the operation ended {}: {operation}", operation["state"]).into());
    }

    let replays_ended_seconds = if action == Action::Replay && creators > 0 {
        let open = "SELECT count(*) FROM tasks WHERE app_id = 'app-ops' AND replay_of IS NOT NULL \
                    AND status IN ('queued', 'running')";
        let mut look = tokio::time::interval(Duration::from_secs(1));
        loop {
            look.tick().await;
            if stack.db.count(open).await == 0 {
                break Some(started.elapsed().as_secs_f64());
            }
            if started.elapsed() > Duration::from_secs(3_600) {
                break None;
            }
        }
    } else {
        None
    };

    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.await??;
    }
    // Each task of the other tenant by when it was created: before the operation, or during it.
    let (mut before_ms, mut during_ms) = (Vec::new(), Vec::new());
    for (created, done_ms) in done.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        if *created < split {
            before_ms.push(*done_ms);
        } else {
            during_ms.push(*done_ms);
        }
    }
    before_ms.sort_by(f64::total_cmp);
    during_ms.sort_by(f64::total_cmp);
    Ok(Run { seconds, operation, statements_per_task, replays_ended_seconds, before_ms, during_ms })
}

/// `tasks` tasks of `app-ops` in scope `ops`, created one a millisecond in the minutes before
/// now (all before the operation: it acts only on those) with UUIDv7 ids in creation order, as
/// the API makes them: failed ones for a replay, queued ones for a cancel.
async fn seed(stack: &Stack, action: Action, tasks: u64) {
    let state = match action {
        Action::Replay => {
            "'failed', 3, 'WORKFLOW_AI_PROVIDER_ERROR', 'The provider failed with HTTP 503.', now(), now(), now()"
        }
        Action::Cancel => "'queued', 0, NULL, NULL, NULL, NULL, now()",
    };
    stack
        .db
        .sql(&format!(
            "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
                 max_attempts, created_at, status, attempts, error_code, error_message, started_at, completed_at, \
                 message_sent_at) \
             SELECT (lpad(to_hex(floor(extract(epoch FROM created) * 1000)::bigint), 12, '0') || '7' \
                     || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid, \
                 '{OPS}', 'ops', 'label', 'seed-' || n, 'classify', \
                 jsonb_build_object('kind', 'classify', 'prompt', 'Sentiment?', 'input', 'text ' || n, \
                                    'choices', jsonb_build_array('pos', 'neg')), \
                 repeat('0', 64), 'default', 3, created, {state} \
             FROM (SELECT n, now() - ({tasks} + 60000 - n) * interval '1 millisecond' AS created, \
                          md5(random()::text || n) AS h \
                   FROM generate_series(1, {tasks}) n) seeds; \
             ANALYZE tasks;"
        ))
        .await;
}

/// The other tenant's normal work until `stop`: create a task, wait for it to end by long poll,
/// again; each task's creation instant and create-to-done milliseconds.
async fn work(
    api: Api,
    creator: usize,
    stop: Arc<AtomicBool>,
    done: Arc<Mutex<Vec<(Instant, f64)>>>,
) -> Result<(), Failure> {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let body = json!({"owner": {"scopeId": "work"}, "stepKey": "label", "effectKey": format!("w{creator}-{n}"),
            "modelId": "default",
            "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                        "choices": ["pos", "neg"]}});
        let started = Instant::now();
        let (status, task) = api.post("/v1/tasks", &body).await;
        if status != 201 {
            return Err(format!("a create answered {status}: {task}").into());
        }
        let id = task["id"].as_str().ok_or("no task id")?.to_owned();
        loop {
            let (status, task) = api.get(&format!("/v1/tasks/{id}?wait=20")).await;
            if status != 200 {
                return Err(format!("a read of the task answered {status}: {task}").into());
            }
            if matches!(task["status"].as_str(), Some("succeeded" | "failed" | "canceled")) {
                break;
            }
        }
        done.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((started, started.elapsed().as_secs_f64() * 1000.0));
    }
    Ok(())
}
