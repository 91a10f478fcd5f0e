//! The console sees what its token's tenant may see: another tenant's task and run are "not
//! found", its runs are not listed, and a refused token sends the user back to sign in.

use aitasks_testkit::Stack;
use serde_json::json;

use crate::{console_url, open, sign_in, webdriver::Browser};

#[tokio::test]
async fn another_tenants_task_is_not_found() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let other = stack.api("other-tenant");
    let (status, run) = other.post("/v1/runs", &json!({"scopeId": "their-scope"})).await;
    assert_eq!(status, 201, "{run}");
    let (status, task) = other
        .post(
            "/v1/tasks",
            &json!({"runId": run["id"], "stepKey": "secret-step", "effectKey": "theirs", "modelId": "default",
                    "request": {"kind": "generate_text", "prompt": "Their private prompt"}}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let mine = stack.api("my-tenant");
    let (status, my_run) = mine.post("/v1/runs", &json!({"scopeId": "my-scope"})).await;
    assert_eq!(status, 201, "{my_run}");

    let browser = sign_in(&stack, "my-tenant").await;
    let runs = browser.wait_text("#runs-results", "my-scope").await;
    assert!(!runs.contains("their-scope"), "{runs}");
    open(&browser, &stack, &format!("#/tasks/{}", task["id"].as_str().unwrap())).await;
    browser.wait_text("main h1", "Task not found").await;
    let page = browser.text("main").await.unwrap();
    assert!(page.contains("404 NOT_FOUND") && !page.contains("Their private prompt"), "{page}");
    open(&browser, &stack, &format!("#/runs/{}", run["id"].as_str().unwrap())).await;
    browser.wait_text("main h1", "Run not found").await;
    browser.quit().await;

    // A token the API refuses: back to the sign-in, saying why.
    let browser = Browser::start().await;
    browser.goto(&console_url(&stack)).await;
    browser.type_into("#token", "not-a-token").await;
    browser.click("#signin").await;
    browser.wait_text("main", "401 UNAUTHORIZED").await;
    browser.wait_text("main h1", "Sign in").await;
    // The token was never put in the URL.
    let url = browser.eval("return location.href", json!([])).await;
    assert!(!url.as_str().unwrap().contains("not-a-token"), "{url}");
    browser.quit().await;
}
