//! Requests, outputs and keys are hostile input: the console shows them as text, and nothing in
//! them runs (no element is made from them, no script side effect happens).
use aitasks_testkit::{wait_until, Reply, Stack};
use serde_json::json;

use crate::{open, sign_in, MODELS};

const HOSTILE: &str = r#"<img src=x onerror="window.__pwned=1;document.title='pwned'"><script>window.__pwned=2;document.title='pwned'</script>"#;

#[tokio::test]
async fn hostile_text_is_shown_as_text_and_runs_nothing() {
    let stack = Stack::start_with(&[("AITASK_MODELS", MODELS)]).await;
    stack.stub.set_default(Reply::Answer(json!({"text": format!("Here: {HOSTILE}")})));
    let api = stack.api("hostile-app");
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": HOSTILE})).await;
    assert_eq!(status, 201, "{run}");
    let (status, task) = api
        .post(
            "/v1/tasks",
            &json!({"runId": run["id"], "stepKey": HOSTILE, "effectKey": "hostile-1", "modelId": "default",
                    "request": {"kind": "generate_text", "prompt": format!("Repeat {HOSTILE}"),
                                "input": {"html": HOSTILE}}}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap();
    let done = api.wait_terminal(id).await;
    assert_eq!(done["status"], "succeeded", "{done}");

    let browser = sign_in(&stack, "hostile-app").await;
    // The run's scope, in the runs list.
    let runs = browser.wait_text("#runs-results", "<img src=x onerror=").await;
    assert!(runs.contains("<script>window.__pwned=2"), "{runs}");
    open(&browser, &stack, &format!("#/tasks/{id}")).await;
    let output = browser.wait_text("#task-output", "<img src=x onerror=").await;
    assert!(output.contains("<script>window.__pwned=2;document.title='pwned'</script>"), "{output}");
    let request = browser.text("#task-request").await.unwrap();
    assert!(request.contains("<img src=x onerror=") && request.contains("<script>"), "{request}");
    let heading = browser.text("main h1").await.unwrap();
    assert!(heading.contains("<img src=x onerror="), "{heading}");
    // An image of our own that cannot load, added now, outside `main`: once its error handler
    // has run, an injected image's (which began loading before it) would have run too.
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
            "return [window.__pwned ?? null, document.title, document.querySelectorAll('main img, main script, main iframe').length]",
            json!([]),
        )
        .await;
    assert_eq!(effects, json!([null, "aitasks console", 0]), "nothing ran, nothing became an element");
    browser.quit().await;
}
