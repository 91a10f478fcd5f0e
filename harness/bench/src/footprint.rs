//! The Lambda footprint of each function binary (release, stripped): size on disk, time from
//! process start to its first request for an event, and peak RSS after handling one event (a
//! batch of ten messages for process-task). The binaries run against a local Lambda Runtime
//! API (`aitasks_testkit::runtime_api`), a real Postgres, the SQS-compatible server and a stub provider.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use aitasks_testkit::runtime_api::{Answer, RuntimeApi};
use aitasks_testkit::{StubProvider, TestQueues, STUB_API_KEY};
use axum::routing::put;
use serde_json::{json, Value};

use crate::size::Size;
use crate::{db, lifecycle, row, Failure};

/// Every Lambda binary template.yaml deploys.
pub(crate) const FUNCTIONS: [&str; 7] =
    ["create-task", "process-task", "sweeper", "release-delete", "migrate", "intake-task", "web-console"];

/// Where the migrate function answers CloudFormation: a `PUT` that is taken and dropped.
async fn start_response_url() -> Result<String, Failure> {
    let app = axum::Router::new().route("/cfn", put(|| async { "" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?.to_string();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://{address}/cfn"))
}

fn fixture(name: &str) -> Result<Value, Failure> {
    let text = std::fs::read_to_string(aitasks_testkit::workspace_root().join("tests/fixtures").join(name))?;
    Ok(serde_json::from_str(&text)?)
}

fn create_body(effect_key: &str) -> Value {
    json!({"owner": {"scopeId": "s1"}, "stepKey": "bench", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}})
}

/// An API Gateway event for `POST path` with `body`.
fn http_event(path: &str, body: &Value) -> Result<Value, Failure> {
    let mut event = fixture("apigw-create-run.json")?;
    event["rawPath"] = json!(path);
    event["routeKey"] = json!(format!("POST {path}"));
    event["requestContext"]["http"]["path"] = json!(path);
    event["body"] = json!(body.to_string());
    Ok(event)
}

/// A batch of `n` messages for new tasks, as the event source mapping delivers them.
async fn task_batch(url: &str, n: usize, prefix: &str) -> Result<Value, Failure> {
    let pool = aitasks_store::connect(&aitasks_store::PoolSettings::new(url))?;
    let client = pool.get().await?;
    let tasks: Vec<_> = (0..n).map(|i| lifecycle::new_task("fixture-app", format!("{prefix}-{i}"))).collect();
    let mut records = Vec::new();
    for (i, created) in
        aitasks_store::create_tasks(&client, "fixture-app", &tasks).await?.into_iter().enumerate()
    {
        records.push(json!({"messageId": format!("m{i}"), "receiptHandle": format!("r{i}"),
            "body": json!({"taskId": created?.task().id}).to_string(), "attributes": {},
            "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:tasks", "awsRegion": "us-east-1"}));
    }
    Ok(json!({"Records": records}))
}

/// Warm invocations timed from the event handed over to the answer taken: what Lambda bills
/// (its duration, rounded up to the millisecond), for the events a million tasks are made of.
async fn warm_durations(
    function: &str,
    runtime: &RuntimeApi,
    url: &str,
    rounds: usize,
) -> Result<Vec<(String, f64)>, Failure> {
    let mut kinds: Vec<(String, Vec<f64>)> = Vec::new();
    for round in 0..rounds {
        let events: Vec<(String, Value)> = match function {
            "create-task" => vec![
                ("one create".into(), http_event("/v1/tasks", &create_body(&format!("warm-{round}")))?),
                (
                    "a batch of 100 creates".into(),
                    http_event(
                        "/v1/tasks/batch",
                        &json!({"tasks": (0..100).map(|i| create_body(&format!("warm-{round}-{i}"))).collect::<Vec<_>>()}),
                    )?,
                ),
            ],
            "process-task" => vec![
                ("a batch of 10 messages".into(), task_batch(url, 10, &format!("warm-{round}")).await?),
                ("a batch of 1 message".into(), task_batch(url, 1, &format!("warm-one-{round}")).await?),
            ],
            _ => return Ok(Vec::new()),
        };
        for (label, event) in events {
            let started = Instant::now();
            let answer = runtime.invoke(event, Duration::from_secs(60)).await;
            if !matches!(answer, Ok(Answer::Response(_))) {
                return Err(format!("{function}: {label} failed: {answer:?}").into());
            }
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            match kinds.iter_mut().find(|(l, _)| *l == label) {
                Some((_, list)) => list.push(ms),
                None => kinds.push((label, vec![ms])),
            }
        }
    }
    Ok(kinds.into_iter().map(|(label, list)| (label, list.iter().sum::<f64>() / list.len() as f64)).collect())
}

/// The event each function handles once.
async fn event_for(function: &str, url: &str, response_url: &str) -> Result<Value, Failure> {
    Ok(match function {
        "create-task" => http_event("/v1/tasks", &create_body("footprint"))?,
        "process-task" => {
            let pool = aitasks_store::connect(&aitasks_store::PoolSettings::new(url))?;
            let client = pool.get().await?;
            let mut records = Vec::new();
            for n in 0..10 {
                let task = lifecycle::new_task("fixture-app", format!("footprint-{n}"));
                let created = aitasks_store::create_task(&client, &task).await?;
                records.push(json!({"messageId": format!("m{n}"), "receiptHandle": format!("r{n}"),
                    "body": json!({"taskId": created.task().id}).to_string(), "attributes": {},
                    "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
                    "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:tasks", "awsRegion": "us-east-1"}));
            }
            json!({"Records": records})
        }
        "sweeper" => fixture("eventbridge-schedule.json")?,
        "release-delete" => fixture("apigw-unreleased-sources.json")?,
        // A create from a workflow's intake queue that names no queue configured here: refused
        // and reported as a failed record, which is an answer (the start, the batch's parse
        // and its refusal run; a create through intake is the create-task rows' work).
        "intake-task" => fixture("sqs-intake.json")?,
        "web-console" => fixture("apigw-console.json")?,
        _ => {
            let mut event = fixture("cloudformation-create.json")?;
            event["ResponseURL"] = json!(response_url);
            event
        }
    })
}

pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

pub(crate) struct Footprint {
    pub function: &'static str,
    pub bytes: u64,
    pub ready: Duration,
    pub peak_rss_kib: u64,
    pub handled: bool,
    /// Mean warm invocation time, by event.
    pub warm_ms: Vec<(String, f64)>,
}

pub(crate) async fn section(base: &str, bin_dir: &Path, size: Size) -> Result<Value, Failure> {
    let rounds = size.pick(20, 20, 1);
    let url = db::fresh_database(base, "aitasks_bench_footprint").await?;
    let queues = TestQueues::create(3, 30).await;
    let stub = StubProvider::start().await;
    let response_url = start_response_url().await?;
    let mut results = Vec::new();
    for function in FUNCTIONS {
        let binary = bin_dir.join(function);
        let bytes = std::fs::metadata(&binary)?.len();
        let runtime = RuntimeApi::start("arn:aws:lambda:us-east-1:123456789012:function:bench").await?;
        let event = event_for(function, &url, &response_url).await?;
        let address = runtime.address.clone();
        let env: HashMap<&str, String> = HashMap::from([
            ("AWS_LAMBDA_RUNTIME_API", address.clone()),
            ("AWS_LAMBDA_FUNCTION_NAME", function.to_owned()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128".to_owned()),
            ("AWS_LAMBDA_FUNCTION_VERSION", "1".to_owned()),
            ("AWS_LAMBDA_LOG_STREAM_NAME", "bench".to_owned()),
            ("AWS_LAMBDA_LOG_GROUP_NAME", "bench".to_owned()),
            ("DATABASE_URL", url.clone()),
            ("AITASK_TASK_QUEUE_URL", queues.tasks.clone()),
            ("AITASK_EVENTS_QUEUE_URL", queues.events.clone()),
            ("AWS_ENDPOINT_URL_SQS", queues.endpoint.clone()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ACCESS_KEY_ID", "bench".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "bench".to_owned()),
            ("OPENAI_BASE_URL", stub.base_url.clone()),
            ("OPENAI_API_KEY", STUB_API_KEY.to_owned()),
            ("RUST_LOG", "warn".to_owned()),
        ]);
        let started = Instant::now();
        let mut env = env;
        // A cluster that serves TLS (the test cluster of a smoke run): its CA, as the tests have it.
        if let Some(ca_file) = std::env::var("AITASK_DB_CA_FILE").ok().filter(|f| !f.is_empty()) {
            env.insert("AITASK_DB_CA_FILE", ca_file);
        }
        let mut child = tokio::process::Command::new(&binary)
            .env_clear()
            .envs(env)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id().ok_or("the function exited at once")?;
        let answer = runtime.invoke(event, Duration::from_secs(60)).await;
        let warm_ms = warm_durations(function, &runtime, &url, rounds).await?;
        let peak = peak_rss_kib(pid).unwrap_or(0);
        let _ = child.kill().await;
        let ready = runtime.ready_at().map(|t| t - started).unwrap_or_default();
        let handled = matches!(&answer, Ok(Answer::Response(_)));
        if !handled {
            println!("  {function}: no successful answer: {answer:?}");
        }
        results.push(Footprint { function, bytes, ready, peak_rss_kib: peak, handled, warm_ms });
    }

    println!(
        "\nLambda footprint (release, stripped; MB = 10^6 bytes; targets: < 10 MB, < 30 ms to ready, < 40 MB peak RSS)"
    );
    row("function", &["MB".into(), "ready ms".into(), "peak MB".into(), "handled".into()]);
    for r in &results {
        row(
            r.function,
            &[
                format!("{:.2}", r.bytes as f64 / 1e6),
                format!("{:.1}", r.ready.as_secs_f64() * 1000.0),
                format!("{:.1}", r.peak_rss_kib as f64 * 1024.0 / 1e6),
                if r.handled { "yes".into() } else { "NO".into() },
            ],
        );
    }
    println!("warm invocations (mean of {rounds}, event in to answer out: the billed duration)");
    for r in &results {
        for (label, ms) in &r.warm_ms {
            row(&format!("{}: {label}", r.function), &[format!("{ms:.1} ms")]);
        }
    }
    Ok(Value::Array(
        results
            .iter()
            .map(|r| {
                let warm: serde_json::Map<String, Value> =
                    r.warm_ms.iter().map(|(label, ms)| (label.clone(), json!(ms))).collect();
                json!({"function": r.function, "bytes": r.bytes, "readyMs": r.ready.as_secs_f64() * 1000.0,
                       "peakRssKiB": r.peak_rss_kib, "handled": r.handled, "warmMs": warm})
            })
            .collect(),
    ))
}
