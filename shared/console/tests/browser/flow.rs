//! One tenant's session: its runs, a run's tasks, a task followed live from queued to succeeded
//! through a failed attempt, a cancel with its confirmation, a task of each kind from the form,
//! the summary. Each page is photographed (the runs and a run in progress.rs).

use std::time::Duration;

use aitasks_testkit::{DevServer, Reply, Stack};
use serde_json::{json, Value};

use crate::{open, sign_in, MODELS};

fn classify(run_id: &str, key: &str) -> Value {
    json!({"runId": run_id, "stepKey": "sentiment", "effectKey": key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment of the review?",
                       "input": {"review": "Arrived quickly, works as described."},
                       "choices": ["positive", "negative"]}})
}

#[tokio::test]
async fn a_tenant_follows_and_steers_its_tasks() {
    // This dev server takes no work: its tasks stay queued until a worker starts below.
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    let api = stack.api("console-app");
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "reviews"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();
    let (status, task) = api.post("/v1/tasks", &classify(&run_id, "review-1")).await;
    assert_eq!(status, 201, "{task}");
    let task_id = task["id"].as_str().unwrap().to_owned();

    let browser = sign_in(&stack, "console-app").await;
    // The runs page lists the run with its tasks counted.
    let runs = browser.wait_text("#runs-results", &run_id[..8]).await;
    assert!(runs.contains("reviews") && runs.contains("0 of 1 done") && runs.contains("1 queued"), "{runs}");

    browser.click(&format!("#runs-results a[href='#/runs/{run_id}']")).await;
    let listed = browser.wait_text("#tasks-results", &task_id[..8]).await;
    assert!(listed.contains("queued") && listed.contains("classify"), "{listed}");

    browser.click(&format!("#tasks-results a[href='#/tasks/{task_id}']")).await;
    browser.wait_text("#task-status", "queued").await;
    browser.eval("window.__sameDocument = 'yes'", json!([])).await;

    // A worker starts; the provider's first answer is a 500 (a failed attempt), the second a
    // valid one. The open page shows it end without a reload.
    stack.stub.script([Reply::status(500)]);
    let worker_env = Stack::env(
        &stack.db,
        &stack.queues,
        &stack.stub,
        &[("AITASK_LOCAL_POLLERS", "2"), ("AITASK_MODELS", MODELS)],
    );
    let mut worker = DevServer::spawn(worker_env).await;
    browser.wait_text_for("#task-status", "succeeded", Duration::from_secs(90)).await;
    assert_eq!(browser.eval("return window.__sameDocument ?? null", json!([])).await, "yes", "no reload");
    let output = browser.text("#task-output").await.unwrap();
    assert!(output.contains("\"positive\""), "{output}");
    let attempts = browser.wait_text("#task-attempts", "WORKFLOW_AI_PROVIDER_ERROR").await;
    assert!(
        attempts.contains("The provider failed with HTTP 500.") && attempts.contains("retried"),
        "{attempts}"
    );
    // 11 input tokens at $2.5 and 7 output tokens at $10 a million (the stub's usage).
    let cost = browser.text("#task-cost").await.unwrap();
    assert_eq!(cost, "$0.00009750");
    browser.screenshot("task").await;
    browser.eval("document.getElementById('h-output').scrollIntoView()", json!([])).await;
    browser.screenshot("task-history").await;

    // Cancel a queued task, through the confirmation dialog.
    worker.kill().await;
    let (status, waiting) = api.post("/v1/tasks", &classify(&run_id, "review-2")).await;
    assert_eq!(status, 201, "{waiting}");
    let waiting_id = waiting["id"].as_str().unwrap().to_owned();
    open(&browser, &stack, &format!("#/tasks/{waiting_id}")).await;
    browser.wait_text("#task-status", "queued").await;
    browser.click("#cancel-task").await;
    browser.wait_text("dialog[open]", "Cancel this task?").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text("#task-status", "canceled").await;
    let (_, stored) = api.get(&format!("/v1/tasks/{waiting_id}")).await;
    assert_eq!(stored["status"], "canceled");

    // "Try a task": one of each kind, from the form.
    open(&browser, &stack, "#/try").await;
    browser.wait_text("main h1", "Try a task").await;
    browser.screenshot("try").await;
    for kind in ["generate_text", "classify", "classify_many", "extract_data"] {
        open(&browser, &stack, &format!("#/try?kind={kind}")).await;
        browser.wait_text("main h1", "Try a task").await;
        browser.click("#try-submit").await;
        browser.wait_text("main h1", "Task try").await;
        let hash = browser.eval("return location.hash", json!([])).await;
        let id = hash.as_str().unwrap().strip_prefix("#/tasks/").unwrap().to_owned();
        let (status, created) = api.get(&format!("/v1/tasks/{id}")).await;
        assert_eq!((status, created["kind"].as_str()), (200, Some(kind)), "{created}");
    }
    // Bad input is shown, and nothing is created.
    open(&browser, &stack, "#/try?kind=classify").await;
    browser.wait_text("main h1", "Try a task").await;
    browser.type_into("#try-model", "no-such-model").await;
    browser.click("#try-submit").await;
    browser.wait_text("#try-outcome", "AI_MODEL_UNKNOWN").await;
    browser.type_into("#try-model", "default").await;
    browser.type_into("#try-input", "{not json").await;
    browser.click("#try-submit").await;
    browser.wait_text("#try-outcome", "Input is not JSON").await;
    let (_, scope) = api.get("/v1/tasks?scopeId=console").await;
    assert_eq!(scope["tasks"].as_array().map(Vec::len), Some(4), "the four tasks of the form: {scope}");

    // The summary: tasks by status, cost by model and day.
    open(&browser, &stack, "#/summary").await;
    let summary = browser.wait_text("#summary-results", "Cost by model").await;
    for expected in ["succeeded 1", "canceled 1", "queued 4", "default", "$0.00009750"] {
        assert!(summary.contains(expected), "{expected} in {summary}");
    }
    browser.screenshot("summary-tables").await;
    browser.quit().await;
}
