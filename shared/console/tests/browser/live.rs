//! A running task's answer on its page as the model writes it: the text grows while the task
//! runs (appended, never repeated), the output is shown once it ends, and a streamed
//! `<img onerror>` stays text.
use std::time::Duration;

use aitasks_testkit::{wait_for, wait_until, DevServer, Reply, Stack};
use serde_json::{json, Value};

use crate::{open, sign_in, MODELS};

const HOSTILE: &str = r#"<img src=x onerror=alert(1)><img src=x onerror="window.__pwned=1">"#;

/// The streamed text, the task's status and how many elements `main` holds that data could have
/// made, read at one instant of the page.
async fn page_now(browser: &crate::webdriver::Browser) -> PageNow {
    // One script, so the text, the status and the attempt are of one moment of the page.
    let now = browser
        .eval(
            "const text = document.getElementById('task-stream-text'); \
             const status = document.getElementById('task-status'); \
             const attempt = document.getElementById('task-stream-attempt'); \
             const note = document.getElementById('task-stream-note'); \
             return [text && !text.hidden ? text.textContent : '', status ? status.textContent : '', \
                     document.querySelectorAll('main img, main script, main iframe').length, \
                     attempt ? attempt.textContent : '', note ? note.textContent : ''];",
            json!([]),
        )
        .await;
    PageNow {
        shown: now[0].as_str().unwrap_or_default().to_owned(),
        status: now[1].as_str().unwrap_or_default().to_owned(),
        elements: now[2].as_u64().unwrap_or(u64::MAX),
        attempt: now[3].as_str().unwrap_or_default().to_owned(),
        note: now[4].as_str().unwrap_or_default().to_owned(),
    }
}

/// What the task page shows at one moment.
struct PageNow {
    shown: String,
    status: String,
    elements: u64,
    attempt: String,
    /// The panel's note (its attempt, and whether the text started over).
    note: String,
}

/// Once the page shows the queued task waiting for its text, a worker starts.
async fn worker_once_waiting(browser: &crate::webdriver::Browser, stack: &Stack) -> DevServer {
    browser.wait_text("#task-status", "queued").await;
    browser.wait_text("#task-stream-note", "nothing written yet").await;
    let env = Stack::env(
        &stack.db,
        &stack.queues,
        &stack.stub,
        &[("AITASK_LOCAL_POLLERS", "2"), ("AITASK_MODELS", MODELS)],
    );
    DevServer::spawn(env).await
}

#[tokio::test]
async fn a_running_tasks_answer_grows_on_its_page_as_text() {
    // This dev server takes no work: the task waits, queued, until the page shows it.
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    let words: Vec<String> = (1..=60).map(|i| format!("word{i}")).collect();
    let text = format!("Here: {HOSTILE} then {}.", words.join(" "));
    let answer = json!({"text": text.clone()});
    // About ten seconds of stream: a few characters at a time.
    stack.stub.set_default(Reply::Streamed {
        inner: Box::new(Reply::Answer(answer.clone())),
        piece_chars: 6,
        every: Duration::from_millis(120),
    });
    let api = stack.api("live-app");
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "live"})).await;
    assert_eq!(status, 201, "{run}");
    let (status, task) = api
        .post(
            "/v1/tasks",
            &json!({"runId": run["id"], "stepKey": "story", "effectKey": "live-1", "modelId": "default",
                    "request": {"kind": "generate_text", "prompt": "Write a story.", "input": {}}}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();

    let browser = sign_in(&stack, "live-app").await;
    open(&browser, &stack, &format!("#/tasks/{id}")).await;
    let _worker = worker_once_waiting(&browser, &stack).await;
    let whole = serde_json::to_string(&answer).unwrap();

    // Part of the answer, the hostile part included, while the task still runs: as text, and
    // no element made from it.
    let first = wait_for("the answer's first part on the page while the task runs", || async {
        let PageNow { shown, status, elements, .. } = page_now(&browser).await;
        assert_eq!(elements, 0, "nothing in the stream became an element: {shown}");
        assert!(!["succeeded", "failed", "canceled"].contains(&status.as_str()), "it ended first: {status}");
        (status == "running" && shown.contains("onerror=alert(1)")).then_some(shown)
    })
    .await;
    assert!(first.len() < whole.len() && whole.starts_with(&first), "a prefix of the answer: {first}");
    let attempt = browser.text("#task-stream-attempt").await.unwrap();
    assert_eq!(attempt, "Attempt 1");
    browser.screenshot("task-live").await;

    // More of it, appended after what was shown, still while it runs.
    wait_until("more of the answer while the task runs", || async {
        let PageNow { shown, status, .. } = page_now(&browser).await;
        assert!(shown.starts_with(&first) || status != "running", "appended, never repeated: {shown}");
        status == "running" && shown.len() > first.len() && whole.starts_with(&shown)
    })
    .await;

    // The end: the task's output, as it is shown for any task (a long string folded).
    browser.wait_text("#task-status", "succeeded").await;
    let output = browser.wait_text("#task-output", "Here: <img src=x onerror=alert(1)>").await;
    let length = format!("({} characters)", text.chars().count());
    assert!(output.contains(&length), "the whole text, {length}: {output}");
    assert_eq!(browser.eval("return document.getElementById('task-stream')", json!([])).await, Value::Null);

    // Nothing of it ran: an image of our own that cannot load, added now outside `main`, runs its
    // error handler after any injected one (which began loading before it) would have.
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
        .eval(
            "return [window.__pwned ?? null, document.title, document.querySelectorAll('main img, main script').length]",
            json!([]),
        )
        .await;
    assert_eq!(effects, json!([null, "aitasks console", 0]), "nothing ran, nothing became an element");
    browser.quit().await;
}

#[tokio::test]
async fn a_retried_attempt_starts_the_text_over_with_its_attempt() {
    // This dev server takes no work: the task waits, queued, until the page shows it.
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    // The first attempt streams for a few seconds, then the provider fails midway (retryable);
    // the second streams a whole answer.
    let first: Vec<(Duration, Vec<u8>)> = (0..12)
        .map(|i| {
            let piece = if i == 0 { "{\"text\": \"FIRST-ATTEMPT".to_owned() } else { format!(" part{i}") };
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
            (Duration::from_millis(250), format!("data: {chunk}\n\n").into_bytes())
        })
        .chain([(
            Duration::ZERO,
            b"data: {\"error\": {\"type\": \"server_error\", \"message\": \"boom\"}}\n\n".to_vec(),
        )])
        .collect();
    let words: Vec<String> = (1..=60).map(|i| format!("second{i}")).collect();
    let second = json!({"text": words.join(" ")});
    stack.stub.script([
        Reply::RawStream(first),
        Reply::Streamed {
            inner: Box::new(Reply::Answer(second.clone())),
            piece_chars: 6,
            every: Duration::from_millis(120),
        },
    ]);
    let api = stack.api("live-app");
    let (status, task) = api
        .post(
            "/v1/tasks",
            &json!({"owner": {"scopeId": "live"}, "stepKey": "story", "effectKey": "retried", "modelId": "default",
                    "request": {"kind": "generate_text", "prompt": "Write a story.", "input": {}}}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();

    let browser = sign_in(&stack, "live-app").await;
    open(&browser, &stack, &format!("#/tasks/{id}")).await;
    let _worker = worker_once_waiting(&browser, &stack).await;
    wait_until("the first attempt's text", || async {
        let PageNow { shown, status, attempt, .. } = page_now(&browser).await;
        let note = browser.text("#task-stream-note").await;
        assert_ne!(status, "succeeded", "it ended first: {shown:?} {note:?}");
        shown.starts_with("{\"text\": \"FIRST-ATTEMPT part1") && attempt == "Attempt 1"
    })
    .await;
    // The retry's text replaces it, noted with its attempt.
    let whole = serde_json::to_string(&second).unwrap();
    let now = wait_for("the second attempt's text while it runs", || async {
        let now = page_now(&browser).await;
        assert_ne!(now.status, "succeeded", "it ended first");
        (now.attempt == "Attempt 2" && !now.shown.is_empty()).then_some(now)
    })
    .await;
    let (shown, note) = (&now.shown, &now.note);
    assert!(whole.starts_with(shown.as_str()) && !shown.contains("FIRST-ATTEMPT"), "started over: {shown}");
    assert!(note.contains("started over"), "{note}");
    browser.wait_text("#task-status", "succeeded").await;
    let output = browser.wait_text("#task-output", "second1 second2").await;
    assert!(!output.contains("FIRST-ATTEMPT"), "{output}");
    browser.quit().await;
}
