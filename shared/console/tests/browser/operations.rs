//! "All that match this filter": a cancel over a run's classify tasks becomes an operation,
//! confirmed with its count and followed on its page to its end; an ended task's page replays
//! it (the replay names its original, the original lists its replay), and a replay of every
//! canceled task of the filter reports the one replayed already as skipped, with its reason.
//! An operation of many pages is followed live, without a reload, and another is stopped.

use std::time::Duration;

use aitasks_testkit::Stack;
use serde_json::{json, Value};

use crate::selection::classify;
use crate::{open, sign_in, MODELS};

const APP: &str = "console-operations";

#[tokio::test]
async fn all_that_match_becomes_an_operation_followed_to_its_end() {
    // No worker: the tasks stay queued until canceled.
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    let api = stack.api(APP);
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "reviews"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();
    let mut ids = Vec::new();
    for n in 1..=5 {
        let (status, task) =
            api.post("/v1/tasks", &classify(json!({"runId": run_id}), &format!("review-{n}"))).await;
        assert_eq!(status, 201, "{task}");
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    let (status, other) = api
        .post(
            "/v1/tasks",
            &json!({"runId": run_id, "stepKey": "summary", "effectKey": "summary-1", "modelId": "default",
                    "request": {"kind": "generate_text", "prompt": "Summarize the reviews."}}),
        )
        .await;
    assert_eq!(status, 201, "{other}");

    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, &format!("#/runs/{run_id}?kind=classify")).await;
    browser.wait_text("#page-counts", "queued 5").await;
    browser.click("#select-matching").await;
    browser.wait_text("#selection-count", "Every task that matches this filter (5 now) is selected.").await;
    browser.click("#bulk-cancel").await;
    let dialog = browser.wait_text("dialog[open]", "Cancel 5 tasks?").await;
    assert!(
        dialog.contains("every task that matches this filter and was created before now: 5 tasks")
            && dialog.contains("kind classify"),
        "{dialog}"
    );
    browser.click("#dialog-confirm").await;

    // The operation's page, followed until it is done.
    browser.wait_text_for("#operation-state", "done", Duration::from_secs(60)).await;
    let counts: Vec<String> = {
        let mut counts = Vec::new();
        for id in ["#operation-matched", "#operation-done", "#operation-skipped", "#operation-failed"] {
            counts.push(browser.text(id).await.unwrap());
        }
        counts
    };
    assert_eq!(counts, ["5", "5", "0", "0"]);
    let progress = browser
        .eval("const p = document.getElementById('operation-progress'); return [p.value, p.max]", json!([]))
        .await;
    assert_eq!(progress, json!([5, 5]));
    for id in &ids {
        let (_, task) = api.get(&format!("/v1/tasks/{id}")).await;
        assert_eq!(task["status"], "canceled", "{task}");
    }
    let (_, untouched) = api.get(&format!("/v1/tasks/{}", other["id"].as_str().unwrap())).await;
    assert_eq!(untouched["status"], "queued", "outside the filter: {untouched}");
    let hash = browser.eval("return location.hash", json!([])).await;
    let operation_id = operation_of(&hash);
    open(&browser, &stack, "#/operations").await;
    browser.element(&format!("#operations-results a[href='#/operations/{operation_id}']")).await;
    let listed = browser.text("#operations-results").await.unwrap();
    assert!(listed.contains("cancel") && listed.contains("done") && listed.contains("5 done"), "{listed}");

    // An ended task's page offers Replay, not Cancel; the replay names its original.
    open(&browser, &stack, &format!("#/tasks/{}", ids[0])).await;
    browser.wait_text("#task-status", "canceled").await;
    let cancel = browser.eval("return document.getElementById('cancel-task') === null", json!([])).await;
    assert_eq!(cancel, json!(true), "no Cancel on an ended task");
    browser.click("#replay-task").await;
    browser.wait_text("dialog[open]", "Replay this task?").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text("#task-replay-of", &ids[0]).await;
    let hash = browser.eval("return location.hash", json!([])).await;
    let replay_id = hash.as_str().unwrap().strip_prefix("#/tasks/").unwrap().to_owned();
    let (_, replay) = api.get(&format!("/v1/tasks/{replay_id}")).await;
    assert_eq!(
        (replay["replayOf"].as_str(), replay["status"].as_str()),
        (Some(ids[0].as_str()), Some("queued")),
        "{replay}"
    );
    assert!(browser.text("#cancel-task").await.is_some(), "an open replay can be canceled");
    open(&browser, &stack, &format!("#/tasks/{}", ids[0])).await;
    browser.element(&format!("#task-replays a[href='#/tasks/{replay_id}']")).await;

    // Replay every canceled classify task of the run: the one replayed already is skipped.
    open(&browser, &stack, &format!("#/runs/{run_id}?kind=classify&status=canceled")).await;
    browser.wait_text("#page-counts", "canceled 5").await;
    browser.click("#select-matching").await;
    browser.click("#bulk-replay").await;
    browser.wait_text("dialog[open]", "Replay 5 tasks?").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text_for("#operation-state", "done", Duration::from_secs(60)).await;
    assert_eq!(browser.text("#operation-done").await.as_deref(), Some("4"));
    assert_eq!(browser.text("#operation-skipped").await.as_deref(), Some("1"));
    let skipped = browser.text("#operation-skipped-because").await.unwrap();
    assert!(skipped.contains("ALREADY_REPLAYED"), "{skipped}");
    browser.quit().await;
}

/// The operation id in a console hash `#/operations/<id>?expected=N`.
fn operation_of(hash: &Value) -> String {
    let hash = hash.as_str().unwrap().strip_prefix("#/operations/").unwrap_or_else(|| panic!("{hash}"));
    hash.split('?').next().unwrap().to_owned()
}

#[tokio::test]
async fn an_operation_is_followed_live_and_another_stopped() {
    // Two tasks a page, the POST working one page at most, the sweeper every second: an
    // operation over 20 tasks runs for a while.
    let mut stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "0"),
        ("AITASK_MODELS", MODELS),
        ("AITASK_REQUEST_PAGE", "2"),
        ("AITASK_REQUEST_WORK_MS", "1"),
        ("AITASK_SWEEP_INTERVAL_MS", "1000"),
    ])
    .await;
    let api = stack.api(APP);
    for n in 1..=20 {
        let (status, task) = api
            .post("/v1/tasks", &classify(json!({"owner": {"scopeId": "inbox"}}), &format!("mail-{n}")))
            .await;
        assert_eq!(status, 201, "{task}");
    }
    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, "#/scopes/inbox").await;
    browser.wait_text("#page-counts", "queued 20").await;
    browser.click("#select-matching").await;
    browser.click("#bulk-cancel").await;
    browser.wait_text("dialog[open]", "Cancel 20 tasks?").await;
    browser.screenshot("confirm-all").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text("#operation-state", "running").await;
    let said = browser.wait_text("#operation-processed", "(about 20 expected)").await;
    assert!(said.contains("still walking the tasks"), "{said}");
    browser.eval("window.__sameDocument = 'yes'", json!([])).await;
    browser.screenshot("operation").await;
    browser.wait_text_for("#operation-state", "done", Duration::from_secs(90)).await;
    assert_eq!(browser.eval("return window.__sameDocument ?? null", json!([])).await, "yes", "no reload");
    assert_eq!(browser.text("#operation-done").await.as_deref(), Some("20"));
    assert!(browser.text("#stop-operation").await.is_none(), "no Stop once done");
    let (_, listed) = api.get("/v1/tasks?scopeId=inbox&status=canceled").await;
    assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(20), "{listed}");

    // Replay them all, and stop it while it runs: it stays stopped, short of the 20. The sweeper
    // now waits (its first sweep comes 31 s after the start), so only the POST's page is done.
    stack.server.set_env("AITASK_SWEEP_INTERVAL_MS", "600000");
    stack.server.restart().await;
    open(&browser, &stack, "#/scopes/inbox?status=canceled").await;
    browser.wait_text("#page-counts", "canceled 20").await;
    browser.click("#select-matching").await;
    browser.click("#bulk-replay").await;
    browser.wait_text("dialog[open]", "Replay 20 tasks?").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text("#operation-state", "running").await;
    browser.click("#stop-operation").await;
    browser.wait_text("#operation-state", "stopped").await;
    let hash = browser.eval("return location.hash", json!([])).await;
    let (_, stopped) = api.get(&format!("/v1/operations/{}", operation_of(&hash))).await;
    assert_eq!(stopped["state"], "stopped", "{stopped}");
    assert!(stopped["done"].as_i64().unwrap() < 20, "{stopped}");
    assert!(browser.text("#stop-operation").await.is_none(), "no Stop once stopped");
    browser.quit().await;
}
