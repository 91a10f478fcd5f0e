//! Operators follow a request and a task through the logs. With JSON logs (as Lambda writes
//! them), every line has a timestamp and a level; each API request is one line (route, tenant,
//! status, error code, task id, latency, the invocation's requestId at the top level), each
//! settlement one line (kind, model, outcome, attempts, provider time, tokens). A store failure
//! shows its SQLSTATE and route in the log, while the caller's answer stays opaque.

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

/// Wait until the log holds a line with this message for which `matches` holds (a line is
/// written once what it reports is done, a moment after the answer or the row that shows it).
async fn wait_for_line(stack: &Stack, message: &str, matches: impl Fn(&Value) -> bool) {
    wait_until(&format!("a {message:?} line"), || {
        let found = !lines_where(&stack.server.json_lines(), message, &matches).is_empty();
        std::future::ready(found)
    })
    .await;
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
    wait_until("the task to succeed", || async {
        let query = format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND status = 'succeeded'");
        stack.db.count(&query).await > 0
    })
    .await;
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
    wait_for_line(&stack, "request", |l| l["status"] == 404).await;
    wait_for_line(&stack, "settled", |l| l["task_id"] == id.as_str()).await;

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
    // Postgres's DETAIL would quote the failing row, the task's prompt and input with it.
    assert!(
        !cause.contains("Sentiment?") && !cause.contains("great") && !cause.contains("Failing row"),
        "the cause quotes the row: {cause}"
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

/// Words a tenant's prompt and input carry; a provider that echoes them must not put them in a log.
const MARKER: &str = "PROMPT-MARKER-5e2d";

fn marked(key: &str) -> Value {
    json!({
        "owner": {"scopeId": "s"}, "stepKey": "classify", "effectKey": key, "modelId": "default",
        "request": {"kind": "classify", "prompt": format!("Sentiment? {MARKER}"),
                    "input": {"text": format!("great {MARKER}")}, "choices": ["pos", "neg"]},
    })
}

/// `{chars} chars, sha256 {first 12 hex}`: what a log line says of a text it must not quote.
fn digest(text: &str) -> String {
    use sha2::Digest;
    format!("{} chars, sha256 {}", text.chars().count(), &hex::encode(sha2::Sha256::digest(text))[..12])
}

/// A provider's error body and its model's refusal both quote the prompt (a marker in it). The
/// tasks end as before (stable sentences), and no INFO, WARN or ERROR line holds the marker:
/// the settled, requeued and fallback lines carry the provider's error code and the text's size
/// and hash instead.
#[tokio::test]
async fn provider_bodies_and_refusals_that_echo_the_prompt_stay_out_of_the_logs() {
    let models = json!({"default": {"model": "stub-model", "fallbacks": ["backup"]},
                        "backup": {"model": "stub-model"}})
    .to_string();
    let stack = Stack::start_with(&[("AITASK_LOG_FORMAT", "json"), ("AITASK_MODELS", &models)]).await;
    let api = stack.api(APP);
    let rejected = json!({"error": {"message": format!("This prompt is not allowed: Sentiment? {MARKER}"),
                                    "type": "invalid_request_error", "code": "content_policy_violation"}})
    .to_string();
    let refusal = format!("I will not classify \"great {MARKER}\".");
    let refused = json!({"model": "stub-model", "usage": {"prompt_tokens": 3, "completion_tokens": 4},
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": null, "refusal": refusal}}]})
    .to_string();
    let overloaded = json!({"error": {"message": format!("overloaded while reading {MARKER}"),
                                      "type": "server_error"}})
    .to_string();
    let garbage = format!("<html>upstream echoed Sentiment? {MARKER}</html>");
    let status = |status: u16, body: &str| Reply::Status { status, body: body.to_owned(), retry_after: None };

    // One task at a time, so each gets its own part of the script.
    let mut ended = Vec::new();
    for (key, script) in [
        ("rejected", vec![status(400, &rejected)]),
        ("refused", vec![status(200, &refused)]),
        // The profile's 503 sends the attempt to its fallback, whose answer is not JSON: the
        // task is requeued, and its second attempt succeeds.
        ("retried", vec![status(503, &overloaded), status(200, &garbage), Reply::Auto]),
    ] {
        stack.stub.script(script);
        let (code, created) = api.post("/v1/tasks", &marked(key)).await;
        assert_eq!(code, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        let task = api.wait_terminal(&id).await;
        ended.push((id, task));
    }
    let statuses: Vec<_> =
        ended.iter().map(|(_, t)| (t["status"].as_str(), t["errorCode"].as_str())).collect();
    assert_eq!(
        statuses,
        [
            (Some("failed"), Some("WORKFLOW_AI_PROVIDER_ERROR")),
            (Some("failed"), Some("AI_MODEL_REFUSED")),
            (Some("succeeded"), None)
        ]
    );
    // What the tenant sees is unchanged: the stable sentences.
    assert_eq!(ended[0].1["errorMessage"], "The provider rejected the request with HTTP 400.");
    assert_eq!(ended[1].1["errorMessage"], "The model refused to answer.");
    for (id, _) in &ended {
        wait_for_line(&stack, "settled", |l| l["task_id"] == id.as_str()).await;
    }

    let lines = stack.server.json_lines();
    for line in &lines {
        let level = line["level"].as_str().unwrap_or_default();
        if ["INFO", "WARN", "ERROR"].contains(&level) {
            assert!(!line.to_string().contains(MARKER), "a {level} line quotes the prompt: {line}");
        }
    }
    let cause = |message: &str, id: &str| -> String {
        let found = lines_where(&lines, message, |l| l["task_id"] == id);
        assert_eq!(found.len(), 1, "one {message} line for {id}: {found:#?}");
        found[0]["cause"].as_str().unwrap_or_default().to_owned()
    };
    let rejected_cause = cause("settled", &ended[0].0);
    assert!(
        rejected_cause.contains("HTTP 400")
            && rejected_cause.contains("content_policy_violation")
            && rejected_cause.contains(&digest(&rejected)),
        "the status, the provider's code, the body's size and hash: {rejected_cause}"
    );
    let refused_cause = cause("settled", &ended[1].0);
    assert!(refused_cause.contains(&digest(&refusal)), "the refusal's size and hash: {refused_cause}");
    let requeued_cause = cause("requeued", &ended[2].0);
    assert!(
        requeued_cause.contains("malformed") && requeued_cause.contains(&digest(&garbage)),
        "the fallback's malformed answer, by size and hash: {requeued_cause}"
    );
    let fallback =
        lines_where(&lines, "the profile failed; trying its fallback", |l| l["task_id"] == ended[2].0);
    assert_eq!(fallback.len(), 1, "{fallback:#?}");
    let error = fallback[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("HTTP 503") && error.contains("server_error") && error.contains(&digest(&overloaded)),
        "the fallback warning names the 503 by code, size and hash: {error}"
    );
}
