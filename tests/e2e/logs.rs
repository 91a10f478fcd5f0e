//! Operators follow a request and a task through the logs. With JSON logs (as Lambda writes
//! them), every line has a timestamp and a level; each API request is one line (route, tenant,
//! status, error code, task id, latency, the invocation's requestId at the top level), each
//! settlement one line (kind, model, outcome, attempts, provider time, tokens). A store failure
//! shows its SQLSTATE and route in the log, while the caller's answer stays opaque.

use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-logs";

fn create(step: &str, key: &str) -> Value {
    json!({
        "owner": {"scopeId": "s"}, "stepKey": step, "effectKey": key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
    })
}

fn lines_where<'a>(lines: &'a [Value], message: &str, matches: impl Fn(&Value) -> bool) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["message"] == message && matches(line)).collect()
}

#[tokio::test]
async fn every_request_and_settlement_is_one_json_line_and_a_500_keeps_its_cause_in_the_log() {
    let stack = Stack::start_with(&[("AITASK_LOG_FORMAT", "json")]).await;
    // A rule the edge does not know: the store meets it as a constraint violation (23514).
    admin(&stack.db.url)
        .await
        .batch_execute("ALTER TABLE tasks ADD CONSTRAINT no_forbidden_steps CHECK (step_key <> 'forbidden')")
        .await
        .unwrap();
    let api = stack.api(APP);

    let (status, created) = api.post("/v1/tasks", &create("classify", "fine")).await;
    assert_eq!(status, 201);
    let id = created["id"].as_str().unwrap().to_owned();
    let until = Instant::now() + Duration::from_secs(15);
    while stack
        .db
        .count(&format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND status = 'succeeded'"))
        .await
        == 0
    {
        assert!(Instant::now() < until, "the task did not succeed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(api.get(&format!("/v1/tasks/{id}")).await.0, 200);
    let failed = api
        .send(reqwest::Method::POST, "/v1/tasks", Some(create("forbidden", "bad").to_string().into_bytes()))
        .await;
    assert_eq!(failed.status, 500);
    assert_eq!(
        failed.body,
        json!({"error": {"code": "INTERNAL", "message": "internal error"}}),
        "opaque to the caller"
    );
    assert_eq!(api.get("/v1/tasks/not-a-task").await.0, 404);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let logs = stack.server.logs();
    // Log lines; the Embedded Metric Format documents beside them are tests/e2e/metrics.rs's.
    let lines: Vec<Value> =
        stack.server.json_lines().into_iter().filter(|line| line.get("_aws").is_none()).collect();
    assert!(lines.len() > 5, "JSON lines:\n{logs}");
    for line in &lines {
        assert!(line["timestamp"].is_string() && line["level"].is_string(), "every line has both: {line}");
    }

    let requests = lines_where(&lines, "request", |_| true);
    assert_eq!(requests.len(), 4, "one line per request: {requests:#?}");
    for line in &requests {
        assert_eq!(line["tenant"], APP, "{line}");
        assert!(line["requestId"].as_str().is_some_and(|r| !r.is_empty()), "the invocation's id: {line}");
        assert!(line["latency_ms"].as_f64().is_some(), "{line}");
    }
    let created_line =
        lines_where(&lines, "request", |l| l["route"] == "POST /v1/tasks" && l["status"] == 201);
    assert_eq!(created_line.len(), 1);
    assert_eq!(created_line[0]["task_id"], id.as_str(), "the created task's id");
    let read =
        lines_where(&lines, "request", |l| l["route"] == "GET /v1/tasks/{taskId}" && l["status"] == 200);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0]["task_id"], id.as_str());
    let missing =
        lines_where(&lines, "request", |l| l["route"] == "GET /v1/tasks/{taskId}" && l["status"] == 404);
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0]["error_code"], "NOT_FOUND");

    let broken = lines_where(&lines, "request", |l| l["status"] == 500);
    assert_eq!(broken.len(), 1);
    let broken = broken[0];
    assert_eq!((broken["route"].as_str(), broken["level"].as_str()), (Some("POST /v1/tasks"), Some("ERROR")));
    assert_eq!(broken["error_code"], "INTERNAL");
    let cause = broken["cause"].as_str().unwrap_or_default();
    assert!(
        cause.contains("SQLSTATE 23514") && cause.contains("no_forbidden_steps"),
        "the whole cause: {cause}"
    );

    let settled = lines_where(&lines, "settled", |l| l["task_id"] == id.as_str());
    assert_eq!(settled.len(), 1, "one line per settlement: {settled:#?}");
    let settled = settled[0];
    assert_eq!((settled["status"].as_str(), settled["kind"].as_str()), (Some("succeeded"), Some("classify")));
    assert_eq!((settled["model_id"].as_str(), settled["attempts"].as_i64()), (Some("default"), Some(1)));
    for figure in ["provider_ms", "input_tokens", "output_tokens", "worked_ms"] {
        assert!(settled[figure].as_u64().is_some(), "{figure} in {settled}");
    }
}
