//! One task at a time, and runs: create (flags and a file), get, wait, cancel, list, tail,
//! runs create/get/cancel, completions.

use std::time::Duration;

use aitasks_testkit::{dev_token, Reply, Stack};
use serde_json::json;

use crate::{aitasks, aitasks_with, classify_body, scratch};

const APP: &str = "app-cli-tasks";

#[tokio::test]
async fn a_run_its_tasks_and_their_answers_through_every_subcommand() {
    let stack = Stack::start().await;
    let token = dev_token(APP);

    // runs create / get
    let run = aitasks(&stack, &token, &["runs", "create", "--scope", "inbox", "--actor", "u1", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(
        (run["state"].as_str(), run["scopeId"].as_str(), run["appId"].as_str()),
        (Some("running"), Some("inbox"), Some(APP))
    );
    let run_id = run["id"].as_str().unwrap().to_owned();
    let read = aitasks(&stack, &token, &["runs", "get", &run_id, "--json"]).await.ok().json();
    assert_eq!(read["id"], run["id"]);

    // create from flags: 201, then the same effect key: 200 with the same task
    let create = [
        "create",
        "--run",
        &run_id,
        "--step",
        "label",
        "--effect-key",
        "mail-1",
        "--kind",
        "classify",
        "--prompt",
        "Is it spam?",
        "--input",
        r#"{"subject": "Win a prize"}"#,
        "--choice",
        "spam,ham",
        "--json",
    ];
    let first = aitasks(&stack, &token, &create).await.ok().json();
    assert_eq!(first["outcome"], "created");
    assert_eq!(first["task"]["runId"].as_str(), Some(run_id.as_str()));
    assert_eq!(first["task"]["request"]["choices"], json!(["spam", "ham"]));
    let again = aitasks(&stack, &token, &create).await.ok().json();
    assert_eq!((again["outcome"].as_str(), &again["task"]["id"]), (Some("existing"), &first["task"]["id"]));
    let id = first["task"]["id"].as_str().unwrap().to_owned();

    // wait: the task ends succeeded with one of its choices; get by id and by effect key agree
    let waited = aitasks(&stack, &token, &["wait", &id, "--timeout", "60", "--json"]).await.ok().json();
    assert_eq!(waited["status"], "succeeded");
    assert!(["spam", "ham"].contains(&waited["output"].as_str().unwrap()), "{waited}");
    let got = aitasks(&stack, &token, &["get", &id, "--json"]).await.ok().json();
    let by_key = aitasks(&stack, &token, &["get", "--effect-key", "mail-1", "--json"]).await.ok().json();
    assert_eq!((&got["status"], &got["output"]), (&waited["status"], &waited["output"]));
    assert_eq!(by_key["id"], got["id"]);
    let text = aitasks(&stack, &token, &["get", &id]).await.ok();
    assert!(text.stdout.contains("status:      succeeded"), "{}", text.stdout);

    // create from a file (a scope's generate_text task), then --wait
    let dir = scratch("create");
    let file = dir.join("body.json");
    let body = json!({"owner": {"scopeId": "inbox"}, "stepKey": "summary", "effectKey": "mail-1/summary",
                      "modelId": "default", "request": {"kind": "generate_text", "prompt": "Summarize.",
                      "input": "a long mail", "maxOutputChars": 200}});
    std::fs::write(&file, body.to_string()).unwrap();
    let made =
        aitasks(&stack, &token, &["create", "--file", file.to_str().unwrap(), "--wait", "60", "--json"])
            .await
            .ok()
            .json();
    assert_eq!(
        (made["outcome"].as_str(), made["task"]["status"].as_str()),
        (Some("created"), Some("succeeded"))
    );
    assert_eq!(made["task"]["kind"], "generate_text");

    // a second task in the run, then list: the run's two, the scope's three, a page at a time
    let second = classify_body("ignored", "mail-2");
    let mut second = second.as_object().unwrap().clone();
    second.remove("owner");
    second.insert("runId".into(), json!(run_id));
    std::fs::write(dir.join("second.json"), json!(second).to_string()).unwrap();
    aitasks(&stack, &token, &["create", "--file", dir.join("second.json").to_str().unwrap()]).await.ok();
    let listed = aitasks(&stack, &token, &["list", "--run", &run_id, "--json"]).await.ok().json();
    assert_eq!(listed["count"], 2);
    let keys: Vec<&str> =
        listed["tasks"].as_array().unwrap().iter().map(|t| t["effectKey"].as_str().unwrap()).collect();
    assert_eq!(keys, ["mail-1", "mail-2"], "in creation order");
    let paged = aitasks(&stack, &token, &["list", "--scope", "inbox", "--page-size", "1", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(paged["count"], 3, "the scope's own task and its run's two, one page each");
    let limited =
        aitasks(&stack, &token, &["list", "--scope", "inbox", "--limit", "2", "--json"]).await.ok().json();
    assert_eq!((limited["count"].as_u64(), &limited["next"]), (Some(2), &limited["tasks"][1]["id"]));
    let rest = aitasks(
        &stack,
        &token,
        &["list", "--scope", "inbox", "--after", limited["next"].as_str().unwrap(), "--json"],
    )
    .await
    .ok()
    .json();
    assert_eq!(rest["count"], 1);
    let succeeded = aitasks(&stack, &token, &["list", "--run", &run_id, "--status", "succeeded", "--json"])
        .await
        .ok()
        .json();
    assert!(succeeded["tasks"].as_array().unwrap().iter().all(|t| t["status"] == "succeeded"));
    let text = aitasks(&stack, &token, &["list", "--run", &run_id]).await.ok();
    assert_eq!(text.stdout.lines().count(), 2, "{}", text.stdout);
    assert!(text.stdout.contains("mail-2"));

    // tail: each task's changes as JSON lines, then `done` once every task has ended
    let tail = aitasks(
        &stack,
        &token,
        &["tail", "--run", &run_id, "--until-done", "--interval", "0.2", "--timeout", "60", "--json"],
    )
    .await
    .ok();
    let lines = tail.json_lines();
    let done = lines.last().unwrap();
    assert_eq!((done["done"].as_bool(), &done["counts"]), (Some(true), &json!({"succeeded": 2})));
    let changed: std::collections::HashSet<&str> =
        lines.iter().filter_map(|l| l["task"]["effectKey"].as_str()).collect();
    assert_eq!(changed, ["mail-1", "mail-2"].into_iter().collect());
    assert!(lines.iter().filter(|l| l.get("task").is_some()).all(|l| l["task"]["runId"] == json!(run_id)));

    // cancel a running task (the provider is slow), then the run
    stack.stub.script([Reply::slow(Duration::from_secs(30))]);
    let slow = aitasks(
        &stack,
        &token,
        &[
            "create",
            "--run",
            &run_id,
            "--step",
            "label",
            "--effect-key",
            "mail-3",
            "--kind",
            "classify",
            "--prompt",
            "Spam?",
            "--input",
            "text",
            "--choice",
            "spam",
            "--choice",
            "ham",
            "--json",
        ],
    )
    .await
    .ok()
    .json();
    let slow_id = slow["task"]["id"].as_str().unwrap().to_owned();
    stack.api(APP).wait_for(&slow_id, |t| t["status"] == "running").await;
    let canceled = aitasks(&stack, &token, &["cancel", &slow_id, "--json"]).await.ok().json();
    assert!(canceled["cancelRequestedAt"].is_string(), "{canceled}");
    let ended = aitasks(&stack, &token, &["wait", &slow_id, "--timeout", "60", "--json"]).await;
    assert_eq!(
        (ended.code, ended.json()["status"].as_str()),
        (1, Some("canceled")),
        "ended, not succeeded: exit 1"
    );
    let run_canceled = aitasks(&stack, &token, &["cancel", "--run", &run_id, "--json"]).await.ok().json();
    assert_eq!(run_canceled["state"], "canceled");
    let again = aitasks(&stack, &token, &["runs", "cancel", &run_id, "--json"]).await.ok().json();
    assert_eq!(again["state"], "canceled", "a second cancel answers the run as it is");
    let refused = aitasks(
        &stack,
        &token,
        &[
            "create",
            "--run",
            &run_id,
            "--step",
            "label",
            "--effect-key",
            "mail-4",
            "--kind",
            "classify",
            "--prompt",
            "Spam?",
            "--input",
            "x",
            "--choice",
            "a,b",
            "--json",
        ],
    )
    .await;
    assert_eq!(refused.code, 1);
    let error = refused.json();
    assert_eq!(
        (error["error"]["status"].as_u64(), error["error"]["code"].as_str()),
        (Some(409), Some("WORKFLOW_AI_RUN_UNAVAILABLE"))
    );
    assert!(
        refused.stderr.contains("WORKFLOW_AI_RUN_UNAVAILABLE"),
        "the code is printed: {}",
        refused.stderr
    );
}

#[tokio::test]
async fn a_task_that_fails_is_reported_with_its_code_and_exit_1() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    stack.stub.set_default(Reply::status(400));
    let made = aitasks(
        &stack,
        &token,
        &[
            "create",
            "--scope",
            "s",
            "--step",
            "label",
            "--effect-key",
            "bad-1",
            "--kind",
            "classify",
            "--prompt",
            "Spam?",
            "--input",
            "x",
            "--choice",
            "a,b",
            "--wait",
            "60",
        ],
    )
    .await;
    assert_eq!(made.code, 1, "{made:?}");
    assert!(made.stdout.contains("WORKFLOW_AI_PROVIDER_ERROR"), "{}", made.stdout);
    assert!(made.stderr.contains("failed: WORKFLOW_AI_PROVIDER_ERROR"), "{}", made.stderr);
    let got = aitasks(&stack, &token, &["get", "--effect-key", "bad-1", "--json"]).await.ok().json();
    assert_eq!(
        (got["status"].as_str(), got["errorCode"].as_str()),
        (Some("failed"), Some("WORKFLOW_AI_PROVIDER_ERROR"))
    );
}

#[tokio::test]
async fn completions_are_printed_for_each_shell_without_a_server() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = aitasks_with(&[], &["completions", shell]).await.ok();
        assert!(run.stdout.contains("aitasks"), "{shell}");
        assert!(run.stdout.contains("batch") && run.stdout.contains("tail"), "{shell}: the subcommands");
    }
    let bad = aitasks_with(&[], &["completions", "tcsh"]).await;
    assert_eq!(bad.code, 2);
}

#[tokio::test]
async fn a_wait_or_tail_past_its_timeout_exits_4_with_the_task_as_last_read() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    stack.stub.set_default(Reply::slow(Duration::from_secs(30)));
    let run = aitasks(&stack, &token, &["runs", "create", "--scope", "slow", "--json"]).await.ok().json();
    let run_id = run["id"].as_str().unwrap();
    let made = aitasks(
        &stack,
        &token,
        &[
            "create",
            "--run",
            run_id,
            "--step",
            "label",
            "--effect-key",
            "slow-1",
            "--kind",
            "classify",
            "--prompt",
            "Spam?",
            "--input",
            "x",
            "--choice",
            "a,b",
            "--json",
        ],
    )
    .await
    .ok()
    .json();
    let id = made["task"]["id"].as_str().unwrap();

    let waited = aitasks(&stack, &token, &["wait", id, "--timeout", "2", "--json"]).await;
    assert_eq!(waited.code, 4, "{waited:?}");
    let answer = waited.json();
    assert_eq!(answer["error"]["code"], "TIMEOUT");
    assert_eq!(answer["task"]["id"], made["task"]["id"]);
    assert!(["queued", "running"].contains(&answer["task"]["status"].as_str().unwrap()), "{answer}");

    let tail = aitasks(
        &stack,
        &token,
        &["tail", "--run", run_id, "--until-done", "--interval", "0.2", "--timeout", "2", "--json"],
    )
    .await;
    assert_eq!(tail.code, 4, "{tail:?}");
    let lines: Vec<serde_json::Value> =
        tail.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["task"]["id"], made["task"]["id"], "the task was shown before the timeout");
    assert_eq!(lines.last().unwrap()["error"]["code"], "TIMEOUT");
    // Without --until-done, --timeout just ends the watch.
    let watch =
        aitasks(&stack, &token, &["tail", "--run", run_id, "--interval", "0.2", "--timeout", "1"]).await.ok();
    assert!(watch.stdout.contains(id), "{}", watch.stdout);

    // A tail that is watching when the run is canceled sees the task end, then stops.
    let url = format!("http://{}", stack.server.address);
    let args = ["tail", "--run", run_id, "--until-done", "--interval", "0.2", "--timeout", "60", "--json"];
    let (env_url, env_token, args) = (url.clone(), token.clone(), args.map(str::to_owned));
    // The listings the server has answered so far: the tail's first one shows the task running.
    let listing = "route=GET /v1/tasks ";
    let listed = stack.server.lines_with(listing);
    let watching = tokio::spawn(async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        aitasks_with(&[("AITASKS_URL", &env_url), ("AITASKS_TOKEN", &env_token)], &args).await
    });
    stack.server.wait_for_lines(listing, listed + 1).await;
    aitasks(&stack, &token, &["cancel", "--run", run_id]).await.ok();
    let tail = watching.await.unwrap().ok();
    let lines = tail.json_lines();
    let statuses: Vec<&str> = lines.iter().filter_map(|l| l["task"]["status"].as_str()).collect();
    assert_eq!(statuses.first(), Some(&"running"), "{}", tail.stdout);
    assert_eq!(statuses.last(), Some(&"canceled"), "{}", tail.stdout);
    let ended = lines.iter().find(|l| l["task"]["status"] == "canceled").unwrap();
    assert_eq!(ended["previous"], "running", "the change, from what was seen before");
    assert_eq!(lines.last().unwrap()["counts"], json!({"canceled": 1}));
}
