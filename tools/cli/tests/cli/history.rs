//! `runs list` and `history <taskId>` against the dev server: the runs with their task counts,
//! page by page and filtered; a task's events, callbacks and batch; bad input refused (by the
//! CLI before sending, or with the API's code) with a non-zero exit; another tenant sees nothing.

use aitasks_testkit::{dev_token, Stack};

use crate::{aitasks, classify_body};

const APP: &str = "app-cli-history";

#[tokio::test]
async fn runs_list_and_a_tasks_history() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let mut runs = Vec::new();
    for _ in 0..3 {
        let run =
            aitasks(&stack, &token, &["runs", "create", "--scope", "inbox", "--json"]).await.ok().json();
        runs.push(run["id"].as_str().unwrap().to_owned());
    }
    let body = scratch_body(&runs[0]);
    let created =
        aitasks(&stack, &token, &["create", "--file", &body, "--wait", "60", "--json"]).await.ok().json();
    let task = created["task"]["id"].as_str().unwrap().to_owned();
    aitasks(&stack, &token, &["runs", "cancel", &runs[2], "--json"]).await.ok();

    // Every run, one a page: the three in creation order with their counts.
    let listed = aitasks(&stack, &token, &["runs", "list", "--page-size", "1", "--json"]).await.ok().json();
    assert_eq!(listed["count"], 3, "{listed}");
    let ids: Vec<&str> =
        listed["runs"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, runs.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(listed["runs"][0]["tasks"]["succeeded"], 1, "{listed}");
    assert_eq!(listed["runs"][1]["tasks"]["succeeded"], 0, "{listed}");
    // --limit stops early and says where to go on from.
    let first = aitasks(&stack, &token, &["runs", "list", "--limit", "1", "--json"]).await.ok().json();
    assert_eq!((first["count"].as_u64(), first["next"].as_str()), (Some(1), Some(runs[0].as_str())));
    let rest = aitasks(&stack, &token, &["runs", "list", "--after", &runs[0], "--json"]).await.ok().json();
    assert_eq!(rest["count"], 2);
    // Filters.
    let canceled =
        aitasks(&stack, &token, &["runs", "list", "--status", "canceled", "--json"]).await.ok().json();
    assert_eq!(
        (canceled["count"].as_u64(), canceled["runs"][0]["id"].as_str()),
        (Some(1), Some(runs[2].as_str()))
    );
    let created_at = listed["runs"][1]["createdAt"].as_str().unwrap();
    let later =
        aitasks(&stack, &token, &["runs", "list", "--created-after", created_at, "--json"]).await.ok().json();
    assert_eq!(later["count"], 2);
    let earlier = aitasks(&stack, &token, &["runs", "list", "--created-before", created_at, "--json"])
        .await
        .ok()
        .json();
    assert_eq!(earlier["count"], 1);
    // Text: a line a run, the count on standard error.
    let text = aitasks(&stack, &token, &["runs", "list"]).await.ok();
    assert_eq!(text.stdout.lines().count(), 3, "{}", text.stdout);
    assert!(text.stdout.lines().next().unwrap().contains("succeeded 1"), "{}", text.stdout);
    assert!(text.stderr.contains("3 runs"), "{}", text.stderr);
    // Another tenant: none.
    let other = aitasks(&stack, &dev_token("someone-else"), &["runs", "list", "--json"]).await.ok().json();
    assert_eq!(other["count"], 0);

    // history: the task's one event, no callback, no batch.
    let history = aitasks(&stack, &token, &["history", &task, "--json"]).await.ok().json();
    assert_eq!(history["taskId"].as_str(), Some(task.as_str()));
    assert_eq!(history["events"]["events"].as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history["events"]["events"][0]["status"], "succeeded");
    assert_eq!(history["callbacks"]["callbacks"].as_array().unwrap().len(), 0);
    assert!(history["batch"].is_null(), "{history}");
    let text = aitasks(&stack, &token, &["history", &task]).await.ok();
    assert!(text.stdout.contains("task.settled  succeeded"), "{}", text.stdout);
    assert!(text.stdout.contains("batch: none"), "{}", text.stdout);

    // Another tenant's task: the API's 404, exit 1.
    let refused = aitasks(&stack, &dev_token("someone-else"), &["history", &task, "--json"]).await;
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_eq!(refused.json()["error"]["code"], "NOT_FOUND");
    // Bad input: refused before anything is sent, exit 2.
    for args in [
        ["runs", "list", "--status", "done"],
        ["runs", "list", "--created-after", "yesterday"],
        ["runs", "list", "--page-size", "101"],
    ] {
        let bad = aitasks(&stack, &token, &args).await;
        assert_eq!(bad.code, 2, "{args:?}: {}", bad.stderr);
    }
}

/// A create body file for a task of this run.
fn scratch_body(run: &str) -> String {
    let mut body = classify_body("inbox", "history-1");
    body.as_object_mut().unwrap().remove("owner");
    body["runId"] = run.into();
    let path = crate::scratch("history").join("body.json");
    std::fs::write(&path, body.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}
