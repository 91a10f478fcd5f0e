//! Acting on many tasks from a list: tasks selected with their checkboxes are canceled, one by
//! one, after a confirmation that says how many; the ones left unselected stay as they were.

use aitasks_testkit::Stack;
use serde_json::{json, Value};

use crate::{open, sign_in, MODELS};

const APP: &str = "console-selection";

pub(crate) fn classify(owner: Value, key: &str) -> Value {
    let mut body = json!({"stepKey": "sentiment", "effectKey": key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment of the review?",
                       "input": {"review": "Arrived quickly, works as described."},
                       "choices": ["positive", "negative"]}});
    body.as_object_mut().unwrap().extend(owner.as_object().unwrap().clone());
    body
}

#[tokio::test]
async fn selected_tasks_are_canceled_after_a_confirmation_that_counts_them() {
    // No worker: the tasks stay queued until canceled.
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    let api = stack.api(APP);
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "reviews"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();
    let mut ids = Vec::new();
    for n in 1..=4 {
        let (status, task) =
            api.post("/v1/tasks", &classify(json!({"runId": run_id}), &format!("review-{n}"))).await;
        assert_eq!(status, 201, "{task}");
        ids.push(task["id"].as_str().unwrap().to_owned());
    }

    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, &format!("#/runs/{run_id}")).await;
    browser.wait_text("#page-counts", "queued 4").await;
    assert_eq!(browser.text("#selection-count").await.as_deref(), Some("No task selected."));
    for id in &ids[..3] {
        browser.click(&format!("input.select-task[data-task='{id}']")).await;
    }
    browser.wait_text("#selection-count", "3 selected on this page.").await;
    browser.screenshot("selection").await;

    // The confirmation says how many; "Do nothing" changes nothing.
    browser.click("#bulk-cancel").await;
    browser.wait_text("dialog[open] #dialog-title", "Cancel 3 tasks?").await;
    browser.click("#dialog-keep").await;
    let (_, listed) = api.get(&format!("/v1/tasks?runId={run_id}")).await;
    assert!(listed["tasks"].as_array().unwrap().iter().all(|t| t["status"] == "queued"), "{listed}");

    browser.click("#bulk-cancel").await;
    let dialog = browser.wait_text("dialog[open]", "Cancel 3 tasks?").await;
    assert!(dialog.contains("Cancel the 3 tasks selected, one by one."), "{dialog}");
    browser.screenshot("confirm").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text("#bulk-done", "3 of 3 canceled.").await;
    // The list shows them canceled, without a reload; the selection is cleared.
    let counts = browser.wait_text("#page-counts", "canceled 3").await;
    assert!(counts.contains("queued 1"), "{counts}");
    assert_eq!(browser.text("#selection-count").await.as_deref(), Some("No task selected."));
    for (n, id) in ids.iter().enumerate() {
        let (_, task) = api.get(&format!("/v1/tasks/{id}")).await;
        assert_eq!(task["status"], if n < 3 { "canceled" } else { "queued" }, "{task}");
    }

    // Selecting an ended task only: nothing to cancel, said so, no dialog.
    browser.click(&format!("input.select-task[data-task='{}']", ids[0])).await;
    browser.click("#bulk-cancel").await;
    browser.wait_text("#bulk-outcome", "Nothing to cancel: the selected task has ended already.").await;
    browser.quit().await;
}
