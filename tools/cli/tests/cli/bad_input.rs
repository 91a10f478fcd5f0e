//! Bad input: a malformed line, an unknown kind, a wrong token, an unknown or another tenant's
//! task. Each is answered with its code and a non-zero exit, and nothing is created.

use aitasks_testkit::{dev_token, token_with, Stack};
use serde_json::json;

use crate::{aitasks, aitasks_with, classify_body, scratch};

const APP: &str = "app-cli-bad";

async fn tasks_of(stack: &Stack) -> i64 {
    stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await
}

#[tokio::test]
async fn a_malformed_or_invalid_line_stops_the_batch_before_anything_is_sent() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let dir = scratch("malformed");
    let mut lines: Vec<String> = (0..10).map(|i| classify_body("s", &format!("k-{i}")).to_string()).collect();
    lines[2] = r#"{"owner": {"scopeId": "s"}, "stepKey": "label", "effectKey": "k-2""#.to_owned();
    let file = dir.join("malformed.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();

    let run = aitasks(&stack, &token, &["batch", file.to_str().unwrap(), "--json"]).await;
    assert_eq!(run.code, 2, "{run:?}");
    let error = &run.json()["error"];
    assert_eq!(error["code"], "INVALID_JSON");
    assert_eq!(
        error["lines"],
        json!([{"line": 3, "code": "INVALID_JSON", "message": error["lines"][0]["message"]}])
    );
    assert!(run.stderr.contains("malformed.jsonl:3: INVALID_JSON"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was sent"));

    // An unknown kind on line 7 (and a missing stepKey on line 9): the API's parser, run here.
    let mut lines: Vec<String> = (0..10).map(|i| classify_body("s", &format!("k-{i}")).to_string()).collect();
    let mut unknown = classify_body("s", "k-6");
    unknown["request"]["kind"] = "summarize".into();
    lines[6] = unknown.to_string();
    let mut no_step = classify_body("s", "k-8");
    no_step.as_object_mut().unwrap().remove("stepKey");
    lines[8] = no_step.to_string();
    let file = dir.join("invalid.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let run = aitasks(&stack, &token, &["batch", file.to_str().unwrap(), "--json"]).await;
    assert_eq!(run.code, 2);
    let error = &run.json()["error"];
    assert_eq!(error["code"], "INVALID_REQUEST");
    let bad: Vec<(u64, &str)> = error["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["line"].as_u64().unwrap(), l["code"].as_str().unwrap()))
        .collect();
    assert_eq!(bad, [(7, "INVALID_REQUEST"), (9, "INVALID_REQUEST")]);
    assert!(error["lines"][0]["message"].as_str().unwrap().contains("request.kind"), "{error}");
    assert!(error["lines"][1]["message"].as_str().unwrap().contains("stepKey"), "{error}");

    assert_eq!(tasks_of(&stack).await, 0, "nothing was created");
    let listed = aitasks(&stack, &token, &["list", "--scope", "s", "--json"]).await.ok().json();
    assert_eq!(listed["count"], 0, "and the API lists nothing");
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "\n\n").unwrap();
    assert_eq!(aitasks(&stack, &token, &["batch", empty.to_str().unwrap()]).await.code, 2);
}

#[tokio::test]
async fn an_unknown_kind_is_the_apis_invalid_request() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let run = aitasks(
        &stack,
        &token,
        &[
            "create",
            "--scope",
            "s",
            "--step",
            "label",
            "--effect-key",
            "k-1",
            "--kind",
            "summarize",
            "--prompt",
            "Summarize.",
            "--input",
            "x",
            "--json",
        ],
    )
    .await;
    assert_eq!(run.code, 1, "{run:?}");
    let error = &run.json()["error"];
    assert_eq!((error["status"].as_u64(), error["code"].as_str()), (Some(400), Some("INVALID_REQUEST")));
    assert_eq!(error["details"][0]["path"], "request.kind");
    assert!(run.stderr.contains("INVALID_REQUEST (HTTP 400)"), "{}", run.stderr);
    let text = aitasks(
        &stack,
        &token,
        &[
            "create",
            "--scope",
            "s",
            "--step",
            "label",
            "--effect-key",
            "k-1",
            "--kind",
            "summarize",
            "--prompt",
            "Summarize.",
            "--input",
            "x",
        ],
    )
    .await;
    assert_eq!((text.code, text.stdout.as_str()), (1, ""), "the error goes to standard error");
    assert!(text.stderr.contains("error: INVALID_REQUEST"), "{}", text.stderr);

    let missing = aitasks(&stack, &token, &["get", "--effect-key", "k-1", "--json"]).await;
    assert_eq!((missing.code, missing.json()["error"]["code"].as_str()), (1, Some("NOT_FOUND")));
    assert_eq!(tasks_of(&stack).await, 0);
}

#[tokio::test]
async fn a_wrong_token_is_401_and_creates_nothing() {
    let stack = Stack::start().await;
    let wrong = token_with("not-the-dev-secret", json!({"app_id": APP, "sub": "x", "expIn": 3600}));
    let run = aitasks(
        &stack,
        &wrong,
        &[
            "create",
            "--scope",
            "s",
            "--step",
            "label",
            "--effect-key",
            "k-1",
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
    assert_eq!(run.code, 1);
    let error = &run.json()["error"];
    assert_eq!((error["status"].as_u64(), error["code"].as_str()), (Some(401), Some("UNAUTHORIZED")));

    let dir = scratch("wrong-token");
    let file = dir.join("tasks.jsonl");
    let lines: Vec<String> = (0..1_500).map(|i| classify_body("s", &format!("k-{i}")).to_string()).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let batch = aitasks(&stack, &wrong, &["batch", file.to_str().unwrap(), "--json"]).await;
    assert_eq!((batch.code, batch.json()["error"]["code"].as_str()), (1, Some("UNAUTHORIZED")));
    assert!(batch.stderr.contains("0 of 1500 items were answered"), "{}", batch.stderr);
    let expired = token_with(aitasks_testkit::DEV_SECRET, json!({"app_id": APP, "sub": "x", "expIn": -3600}));
    let run = aitasks(&stack, &expired, &["list", "--scope", "s", "--json"]).await;
    assert_eq!((run.code, run.json()["error"]["code"].as_str()), (1, Some("UNAUTHORIZED")));
    assert_eq!(tasks_of(&stack).await, 0, "nothing was created");

    let none = aitasks_with(
        &[("AITASKS_URL", &format!("http://{}", stack.server.address))],
        &["list", "--scope", "s", "--json"],
    )
    .await;
    assert_eq!(
        (none.code, none.json()["error"]["code"].as_str()),
        (2, Some("INVALID_INPUT")),
        "no token: nothing sent"
    );
}

#[tokio::test]
async fn an_unknown_or_another_tenants_task_is_not_found() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
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
            "mine",
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
    let other = dev_token("app-cli-other");
    for args in [
        vec!["get", id, "--json"],
        vec!["cancel", id, "--json"],
        vec!["wait", id, "--timeout", "1", "--json"],
    ] {
        let run = aitasks(&stack, &other, &args).await;
        assert_eq!((run.code, run.json()["error"]["code"].as_str()), (1, Some("NOT_FOUND")), "{args:?}");
    }
    let unknown = uuid::Uuid::now_v7().to_string();
    let run = aitasks(&stack, &token, &["runs", "get", &unknown, "--json"]).await;
    assert_eq!((run.code, run.json()["error"]["status"].as_u64()), (1, Some(404)));
    let bad_id = aitasks(&stack, &token, &["get", "not-a-uuid"]).await;
    assert_eq!(bad_id.code, 2, "refused by the command line itself");
    let unreachable = aitasks_with(
        &[("AITASKS_URL", "http://127.0.0.1:1"), ("AITASKS_TOKEN", &token)],
        &["get", id, "--tries", "1", "--json"],
    )
    .await;
    assert_eq!((unreachable.code, unreachable.json()["error"]["code"].as_str()), (3, Some("UNREACHABLE")));
}
