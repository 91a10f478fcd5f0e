//! Runs' progress bars: a run whose tasks ended succeeded, failed and canceled in known numbers,
//! two left queued, is drawn done of total on the runs list (over a run's first 1,000 tasks, said
//! so for a bigger run) and at the top of its page (over its first 10,000), with the numbers
//! written and as the bar's value; the run's page moves when a task ends while it is open. A hostile scope id beside the
//! bar stays text.

use std::time::Duration;

use aitasks_testkit::{wait_until, Api, DevServer, Reply, Stack};
use serde_json::{json, Value};

use crate::selection::classify;
use crate::webdriver::Browser;
use crate::{open, sign_in, MODELS};

const APP: &str = "console-progress";
const HOSTILE: &str = r#"<img src=x onerror="window.__pwned=1">"#;

/// A bar's sentence and its `progressbar`'s `[aria-valuenow, aria-valuemax, aria-valuetext]`,
/// once it is on the page.
async fn bar(browser: &Browser, id: &str) -> (String, Value) {
    browser.element(&format!("#{id}-bar")).await;
    let text = browser.text(&format!("#{id}-text")).await.unwrap_or_else(|| panic!("no bar {id}"));
    let aria = browser
        .eval(
            "const b = document.getElementById(arguments[0]); \
             return ['aria-valuenow', 'aria-valuemax', 'aria-valuetext', 'role'].map((a) => b.getAttribute(a));",
            json!([format!("{id}-bar")]),
        )
        .await;
    (text, aria)
}

async fn create(api: &Api, run_id: &str, key: &str, prompt: &str) -> String {
    let mut body = classify(json!({"runId": run_id}), key);
    body["request"]["prompt"] = json!(prompt);
    let (status, task) = api.post("/v1/tasks", &body).await;
    assert_eq!(status, 201, "{task}");
    task["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn runs_show_their_progress_as_bars_that_move_live() {
    // No worker but the one started below for a while: the tasks created after it stay queued.
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    // The provider refuses (400, no retry) the prompts that ask for it; it answers the others.
    stack.stub.set_default(Reply::Matching {
        needle: "FAIL-THIS".into(),
        then: Box::new(Reply::status(400)),
        otherwise: Box::new(Reply::Auto),
    });
    let api = stack.api(APP);
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "reviews"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();
    let mut ended = Vec::new();
    for n in 1..=3 {
        ended.push(create(&api, &run_id, &format!("ok-{n}"), "Sentiment of the review?").await);
    }
    for n in 1..=2 {
        ended.push(create(&api, &run_id, &format!("bad-{n}"), "FAIL-THIS review").await);
    }
    let worker_env = Stack::env(
        &stack.db,
        &stack.queues,
        &stack.stub,
        &[("AITASK_LOCAL_POLLERS", "2"), ("AITASK_MODELS", MODELS)],
    );
    let mut worker = DevServer::spawn(worker_env).await;
    let mut statuses = Vec::new();
    for id in &ended {
        statuses.push(api.wait_terminal(id).await["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["succeeded", "succeeded", "succeeded", "failed", "failed"]);
    worker.kill().await;
    let canceled = create(&api, &run_id, "cancel-1", "Sentiment of the review?").await;
    let (status, task) = api.post(&format!("/v1/tasks/{canceled}/cancel"), &json!({})).await;
    assert_eq!((status, task["status"].as_str()), (200, Some("canceled")), "{task}");
    let ends_later = create(&api, &run_id, "queued-1", "Sentiment of the review?").await;
    create(&api, &run_id, "queued-2", "Sentiment of the review?").await;

    // A run of 10,001 tasks, all succeeded: the list counts its first 1,000, its page its first
    // 10,000.
    let (status, big) = api.post("/v1/runs", &json!({"scopeId": "catalog"})).await;
    assert_eq!(status, 201, "{big}");
    let big_id = big["id"].as_str().unwrap().to_owned();
    stack
        .db
        .sql(&format!(
            "INSERT INTO tasks (id, app_id, run_id, step_key, effect_key, kind, request, input_hash, model_id, \
                 max_attempts, status, attempts, output, completed_at) \
             SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, '{APP}', '{big_id}', 'step', \
                 'big-' || n, 'classify', '{{}}', repeat('0', 64), 'default', 3, 'succeeded', 1, '\"pos\"'::jsonb, now() \
             FROM generate_series(1, 10001) n"
        ))
        .await;

    let browser = sign_in(&stack, APP).await;
    let (text, aria) = bar(&browser, &format!("runbar-{run_id}")).await;
    let known = "6 of 8 done: 3 succeeded, 2 failed, 1 canceled; 0 running, 2 queued";
    assert_eq!(text, known);
    assert_eq!(aria, json!(["6", "8", known, "progressbar"]));
    // Drawn: succeeded, failed and canceled from the left in their shares of the track (3, 2 and 1
    // of 8); the queued rest is the empty track.
    let drawn = browser
        .eval(
            "const track = document.getElementById(arguments[0]); const whole = track.clientWidth; \
             return [...track.children].map((s) => [s.dataset.status, 100 * s.getBoundingClientRect().width / whole]);",
            json!([format!("runbar-{run_id}-bar")]),
        )
        .await;
    let drawn: Vec<(String, f64)> = serde_json::from_value(drawn).unwrap();
    let shares = [("succeeded", 37.5), ("failed", 25.0), ("canceled", 12.5)];
    assert_eq!(drawn.len(), shares.len(), "{drawn:?}");
    for ((status, width), (expected, share)) in drawn.iter().zip(shares) {
        assert!(status == expected && (width - share).abs() < 1.5, "{drawn:?}");
    }
    let (text, aria) = bar(&browser, &format!("runbar-{big_id}")).await;
    let first = "1,000 of 1,000 done: 1,000 succeeded, 0 failed, 0 canceled; 0 running, 0 queued \
                 (first 1,000 tasks counted: the run has more)";
    assert_eq!(text, first);
    assert_eq!(aria, json!(["1000", "1000", first, "progressbar"]));
    browser.screenshot("runs").await;

    // The run's page: the same counts at the top, read again while a task is queued; a task that
    // ends while the page is open moves the bar.
    browser.click(&format!("#runs-results a[href='#/runs/{run_id}']")).await;
    browser.wait_text("#run-progress-text", known).await;
    let (_, aria) = bar(&browser, "run-progress").await;
    assert_eq!(aria, json!(["6", "8", known, "progressbar"]));
    browser.wait_text("#run-progress-live", "Live: read again every").await;
    browser.wait_text("#tasks-results", &ends_later[..8]).await;
    browser.screenshot("run").await;
    browser.eval("window.__sameDocument = 'yes'", json!([])).await;
    let (status, task) = api.post(&format!("/v1/tasks/{ends_later}/cancel"), &json!({})).await;
    assert_eq!(status, 200, "{task}");
    let moved = "7 of 8 done: 3 succeeded, 2 failed, 2 canceled; 0 running, 1 queued";
    browser.wait_text_for("#run-progress-text", moved, Duration::from_secs(30)).await;
    let (_, aria) = bar(&browser, "run-progress").await;
    assert_eq!(aria, json!(["7", "8", moved, "progressbar"]));
    assert_eq!(browser.eval("return window.__sameDocument ?? null", json!([])).await, "yes", "no reload");

    // The last one ends: the bar is whole and the page stops reading.
    let (status, run) = api.post(&format!("/v1/runs/{run_id}/cancel"), &json!({})).await;
    assert_eq!(status, 200, "{run}");
    browser.wait_text_for("#run-progress-text", "8 of 8 done", Duration::from_secs(30)).await;
    browser.wait_text("#run-progress-live", "No task of the run is queued or running.").await;

    // The big run's page counts its first 10,000 tasks, and says so.
    open(&browser, &stack, &format!("#/runs/{big_id}")).await;
    let counted = "10,000 of 10,000 done: 10,000 succeeded, 0 failed, 0 canceled; 0 running, 0 queued \
                   (first 10,000 tasks counted: the run has more)";
    browser.wait_text("#run-progress-text", counted).await;
    let (_, aria) = bar(&browser, "run-progress").await;
    assert_eq!(aria, json!(["10000", "10000", counted, "progressbar"]));
    // Its first 10,000 are done, but not the run: the page keeps reading.
    browser.wait_text("#run-progress-live", "the run has more tasks than the 10,000 counted").await;

    // A hostile scope id beside the bar, on the list and on the run's page, stays text.
    let (status, hostile) = api.post("/v1/runs", &json!({"scopeId": HOSTILE})).await;
    assert_eq!(status, 201, "{hostile}");
    let hostile_id = hostile["id"].as_str().unwrap().to_owned();
    create(&api, &hostile_id, "hostile-1", "Sentiment of the review?").await;
    open(&browser, &stack, "#/").await;
    let row = browser.wait_text("#runs-results", HOSTILE).await;
    assert!(row.contains("0 of 1 done"), "{row}");
    open(&browser, &stack, &format!("#/runs/{hostile_id}")).await;
    browser
        .wait_text(
            "#run-progress-text",
            "0 of 1 done: 0 succeeded, 0 failed, 0 canceled; 0 running, 1 queued",
        )
        .await;
    browser.wait_text("#owner", HOSTILE).await;
    nothing_ran(&browser).await;
    browser.quit().await;
}

/// No element was made of the hostile text, and none of its script ran.
async fn nothing_ran(browser: &Browser) {
    // An image of our own that cannot load, added now outside `main`: once its error handler has
    // run, an injected one's (which began loading before it) would have run too.
    browser
        .eval(
            "const img = document.createElement('img'); img.onerror = () => { window.__canary = true; }; \
             img.src = 'x-canary'; document.body.appendChild(img); return null;",
            json!([]),
        )
        .await;
    wait_until("the canary image's error handler", || async {
        browser.eval("return window.__canary === true;", json!([])).await == json!(true)
    })
    .await;
    let effects = browser
        .eval("return [window.__pwned ?? null, document.querySelectorAll('main img').length]", json!([]))
        .await;
    assert_eq!(effects, json!([null, 0]), "nothing ran, nothing became an element");
}
