//! `runs list`, `history <taskId>`, `summary` and `list`'s filters against the dev server: the
//! runs with their task counts, page by page and filtered; a task's attempts (a retried one's
//! error, the answer's tokens), events, callbacks and batch; the tenant's tasks and tokens by day
//! and model; bad input refused (by the CLI before sending, or with the API's code) with a
//! non-zero exit; another tenant sees nothing.

use aitasks_testkit::{dev_token, Reply, Stack};

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
    let attempts = history["attempts"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{history}");
    assert_eq!(
        (attempts[0]["attempt"].as_u64(), attempts[0]["outcome"].as_str()),
        (Some(1), Some("succeeded"))
    );
    assert_eq!(history["events"]["events"].as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history["events"]["events"][0]["status"], "succeeded");
    assert_eq!(history["callbacks"]["callbacks"].as_array().unwrap().len(), 0);
    assert!(history["batch"].is_null(), "{history}");
    let text = aitasks(&stack, &token, &["history", &task]).await.ok();
    assert!(text.stdout.contains("task.settled  succeeded"), "{}", text.stdout);
    assert!(
        text.stdout.contains("attempts (1):") && text.stdout.contains("#1  succeeded"),
        "{}",
        text.stdout
    );
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

#[tokio::test]
async fn a_retried_tasks_attempts_the_summary_and_list_filters() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    // Attempt 1 meets a 500 (retried); attempt 2 answers (11 input and 7 output tokens).
    stack.stub.script([Reply::status(500)]);
    let path = crate::scratch("attempts").join("body.json");
    std::fs::write(&path, classify_body("inbox", "retried").to_string()).unwrap();
    let created =
        aitasks(&stack, &token, &["create", "--file", path.to_str().unwrap(), "--wait", "60", "--json"])
            .await
            .ok()
            .json();
    let task = created["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["attempts"], 2, "{created}");

    let history = aitasks(&stack, &token, &["history", &task, "--json"]).await.ok().json();
    let attempts = history["attempts"]["attempts"].as_array().unwrap();
    let outcomes: Vec<(u64, &str)> =
        attempts.iter().map(|a| (a["attempt"].as_u64().unwrap(), a["outcome"].as_str().unwrap())).collect();
    assert_eq!(outcomes, [(1, "retried"), (2, "succeeded")], "{history}");
    assert_eq!(attempts[0]["errorCode"], "WORKFLOW_AI_PROVIDER_ERROR", "{history}");
    assert!(attempts[0]["usage"].is_null(), "{history}");
    assert_eq!(attempts[1]["usage"], serde_json::json!({"inputTokens": 11, "outputTokens": 7}), "{history}");
    assert!(attempts[1]["errorCode"].is_null(), "{history}");
    let text = aitasks(&stack, &token, &["history", &task]).await.ok();
    let lines: Vec<&str> = text.stdout.lines().filter(|l| l.trim_start().starts_with('#')).collect();
    assert_eq!(lines.len(), 2, "{}", text.stdout);
    assert!(
        lines[0].contains("#1  retried") && lines[0].contains("WORKFLOW_AI_PROVIDER_ERROR"),
        "{}",
        text.stdout
    );
    assert!(
        lines[1].contains("#2  succeeded") && lines[1].contains("tokens 11 in / 7 out"),
        "{}",
        text.stdout
    );

    // summary: the one task, its tokens under its model and day.
    let summary = aitasks(&stack, &token, &["summary", "--json"]).await.ok().json();
    assert_eq!(summary["tasks"]["succeeded"], 1, "{summary}");
    assert_eq!((summary["examined"].as_u64(), summary["complete"].as_bool()), (Some(1), Some(true)));
    let costs = summary["costs"].as_array().unwrap();
    assert_eq!(costs.len(), 1, "{summary}");
    assert_eq!((costs[0]["modelId"].as_str(), costs[0]["tasks"].as_u64()), (Some("default"), Some(1)));
    assert_eq!((costs[0]["inputTokens"].as_u64(), costs[0]["outputTokens"].as_u64()), (Some(11), Some(7)));
    assert_eq!(costs[0]["day"].as_str(), created["task"]["createdAt"].as_str().map(|at| &at[..10]));
    let text = aitasks(&stack, &token, &["summary"]).await.ok();
    assert!(text.stdout.contains("succeeded 1"), "{}", text.stdout);
    assert!(text.stdout.contains("default  tasks 1  tokens 11 in / 7 out"), "{}", text.stdout);
    let other = aitasks(&stack, &dev_token("someone-else"), &["summary", "--json"]).await.ok().json();
    assert_eq!(other["examined"], 0, "{other}");
    // A window over 31 days: the API's 400 naming the parameter, exit 1; a malformed time: exit 2.
    let wide =
        aitasks(&stack, &token, &["summary", "--created-after", "2020-01-01T00:00:00Z", "--json"]).await;
    assert_eq!(wide.code, 1, "{}", wide.stderr);
    let error = &wide.json()["error"];
    assert_eq!(
        (error["code"].as_str(), error["details"][0]["path"].as_str()),
        (Some("INVALID_REQUEST"), Some("createdAfter"))
    );
    assert_eq!(aitasks(&stack, &token, &["summary", "--created-before", "today"]).await.code, 2);

    // list's filters: by kind and model.
    let count = |args: &'static [&'static str]| {
        let (stack, token) = (&stack, &token);
        async move { aitasks(stack, token, args).await.ok().json()["count"].as_u64().unwrap() }
    };
    assert_eq!(count(&["list", "--scope", "inbox", "--kind", "classify", "--json"]).await, 1);
    assert_eq!(count(&["list", "--scope", "inbox", "--kind", "generate_text", "--json"]).await, 0);
    assert_eq!(count(&["list", "--scope", "inbox", "--model", "default", "--json"]).await, 1);
    assert_eq!(count(&["list", "--scope", "inbox", "--model", "elsewhere", "--json"]).await, 0);
    assert_eq!(
        count(&["list", "--scope", "inbox", "--created-before", "2020-01-01T00:00:00Z", "--json"]).await,
        0
    );
    assert_eq!(aitasks(&stack, &token, &["list", "--scope", "inbox", "--kind", "summarize"]).await.code, 2);
    // runs list by scope.
    aitasks(&stack, &token, &["runs", "create", "--scope", "elsewhere", "--json"]).await.ok();
    assert_eq!(count(&["runs", "list", "--scope", "elsewhere", "--json"]).await, 1);
    assert_eq!(count(&["runs", "list", "--scope", "inbox", "--json"]).await, 0);
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
