//! Lambda durable-function callbacks: a create names `{"lambdaDurable": {"callbackId": …}}`, and
//! the task's end is sent with `SendDurableExecutionCallbackSuccess` / `...Failure` through
//! aws-sdk-lambda, to a stub of Lambda's REST API that checks every request's SigV4 signature
//! (no emulator implements durable functions). The stub throttles and fails some calls: each
//! callback still gets exactly one answer accepted.

use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-durable";

async fn stack(durable: &DurableStub) -> Stack {
    Stack::start_with(&[
        ("AWS_ENDPOINT_URL_LAMBDA", &durable.endpoint),
        ("AWS_ACCESS_KEY_ID", DURABLE_ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", DURABLE_SECRET_KEY),
        ("AITASK_CALLBACK_HEARTBEAT_MS", "300"),
    ])
    .await
}

fn create(effect_key: &str, callback_id: &str) -> Value {
    json!({
        "owner": {"scopeId": "docs"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
        "callback": {"lambdaDurable": {"callbackId": callback_id}},
    })
}

/// Wait until `check` holds (up to the testkit's [`PATIENCE`]).
async fn eventually(what: &str, check: impl Fn() -> bool) {
    wait_until(what, || std::future::ready(check())).await;
}

#[tokio::test]
async fn a_durable_callback_gets_one_signed_answer_through_throttling_and_errors() {
    let durable = DurableStub::start().await;
    // Every third call is refused (a throttle, then a 5xx): the SDK and the outbox retry them.
    durable.faults(3);
    let stack = stack(&durable).await;
    let api = stack.api(APP);
    // The first task succeeds after a slow call (heartbeats meanwhile); the second fails.
    stack.stub.script([Reply::slow(Duration::from_millis(1500)), Reply::status(400)]);
    let succeeding = durable.open();
    let failing = durable.open();
    let (status, task) = api.post("/v1/tasks", &create("doc-ok", &succeeding)).await;
    assert_eq!(status, 201, "{task}");
    let ok_id = task["id"].as_str().unwrap().to_owned();
    assert!(!task.to_string().contains(&succeeding), "the token is never in an answer");
    api.wait_terminal(&ok_id).await;
    let (status, task) = api.post("/v1/tasks", &create("doc-fail", &failing)).await;
    assert_eq!(status, 201, "{task}");
    let failed_id = task["id"].as_str().unwrap().to_owned();
    api.wait_terminal(&failed_id).await;

    eventually("both answers accepted", || {
        durable.accepted_answers(&succeeding).len() == 1 && durable.accepted_answers(&failing).len() == 1
    })
    .await;
    let success = &durable.accepted_answers(&succeeding)[0];
    assert_eq!(success.action, "succeed");
    let result: Value = serde_json::from_str(success.body.as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"taskId": ok_id, "status": "succeeded", "output": "pos", "usage": result["usage"]})
    );
    let failure = &durable.accepted_answers(&failing)[0];
    assert_eq!(failure.action, "fail");
    assert_eq!(failure.body["ErrorType"], "WORKFLOW_AI_PROVIDER_ERROR", "{:?}", failure.body);
    let (_, failed_task) = api.get(&format!("/v1/tasks/{failed_id}")).await;
    assert_eq!(failure.body["ErrorMessage"], failed_task["errorMessage"], "the cause is the stored message");
    assert_eq!(
        serde_json::from_str::<Value>(failure.body["ErrorData"].as_str().unwrap()).unwrap()["taskId"],
        failed_id.as_str()
    );
    assert!(
        durable
            .calls()
            .iter()
            .any(|c| c.callback_id == succeeding && c.action == "heartbeat" && c.refused.is_none()),
        "the slow task's caller was heartbeated"
    );
    assert!(durable.calls().iter().any(|c| c.refused.is_some()), "some calls were refused and retried");
    assert_eq!(durable.bad_signatures(), 0, "every request was signed with the function's credentials");
    // Answered once, nothing more: no answer after the accepted one (a heartbeat sent before the
    // task ended may still land, and is refused), and the callbacks stay delivered: not in
    // three more sweeps (which deliver owed answers and heartbeat the waiting).
    stack.server.wait_for_sweeps(3).await;
    let after: Vec<_> = durable
        .calls()
        .into_iter()
        .skip_while(|c| !(c.callback_id == succeeding && c.refused.is_none() && c.action == "succeed"))
        .skip(1)
        .filter(|c| c.callback_id == succeeding && c.action != "heartbeat")
        .collect();
    assert!(after.is_empty(), "answers after the accepted one: {after:?}");
    assert_eq!(stack.db.count("SELECT count(*) FROM task_callbacks WHERE state = 'delivered'").await, 2);
    let logs = stack.server.logs();
    assert!(!logs.contains(&succeeding) && !logs.contains(&failing), "no token in a log line");
}

#[tokio::test]
async fn a_callback_for_an_existing_task_is_answered_and_a_bad_token_is_a_400() {
    let durable = DurableStub::start().await;
    let stack = stack(&durable).await;
    let api = stack.api(APP);
    let first = durable.open();
    let (status, task) = api.post("/v1/tasks", &create("doc-1", &first)).await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    api.wait_terminal(&id).await;
    // A second caller names the same effect key after the task ended: answered at once.
    let second = durable.open();
    let (status, _) = api.post("/v1/tasks", &create("doc-1", &second)).await;
    assert_eq!(status, 200);
    eventually("both callers answered", || {
        durable.accepted_answers(&first).len() == 1 && durable.accepted_answers(&second).len() == 1
    })
    .await;

    let secret = "not/a valid id!";
    let (status, body) = api.post("/v1/tasks", &create("doc-2", secret)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "callback.lambdaDurable.callbackId");
    assert!(!body.to_string().contains(secret), "the token is not echoed: {body}");
    // In a batch, the bad item alone is refused.
    let batch = json!({"tasks": [create("doc-3", &durable.open()), create("doc-4", secret)]});
    let (status, answer) = api.post("/v1/tasks/batch", &batch).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["status"], 201);
    assert_eq!(answer["results"][1]["status"], 400);
    assert_eq!(stack.db.count("SELECT count(*) FROM task_callbacks").await, 3);
}

/// A caller that stopped waiting is recorded gone at its next heartbeat, and never called again.
#[tokio::test]
async fn a_durable_caller_that_timed_out_is_not_called_again() {
    let durable = DurableStub::start().await;
    let stack = stack(&durable).await;
    let api = stack.api(APP);
    stack.stub.script([Reply::slow(Duration::from_secs(2))]);
    let id = durable.open();
    durable.time_out(&id);
    let (status, task) = api.post("/v1/tasks", &create("doc-gone", &id)).await;
    assert_eq!(status, 201);
    let task = api.wait_terminal(task["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "succeeded", "a running task is left to finish: {task}");
    let gone =
        stack.db.count("SELECT count(*) FROM task_callbacks WHERE state = 'gone' AND token IS NULL").await;
    assert_eq!(gone, 1);
    let calls = durable.calls().iter().filter(|c| c.callback_id == id).count();
    stack.server.wait_for_sweeps(3).await;
    assert_eq!(durable.calls().iter().filter(|c| c.callback_id == id).count(), calls, "no call after gone");
    assert!(durable.accepted_answers(&id).is_empty());
}
