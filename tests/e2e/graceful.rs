//! Graceful behaviour when a dependency is down: Postgres (create answers 503 `UNAVAILABLE` and
//! stores nothing; the message waits on the queue), SQS (create still succeeds and the sweeper
//! sends later), the provider (tasks retry, then fail with the provider's error code).

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-graceful";

fn dead_address() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("127.0.0.1:{port}")
}

fn classify(effect_key: &str) -> Value {
    json!({
        "owner": {"scopeId": "s1"}, "stepKey": "step", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]},
    })
}

/// A URL like `url` (credentials, database) on a port where nothing listens.
fn dead_database_url(url: &str) -> String {
    let host_port = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    url.replacen(host_port, &dead_address(), 1)
}

#[tokio::test]
async fn postgres_down_answers_503_stores_nothing_and_the_message_waits() {
    // The owner URL stays good (the dev server migrates at start); the functions' URL is dead.
    let dead_url = dead_database_url(&app_base_url());
    let mut stack = Stack::start_with_visibility(&[("DATABASE_URL", &dead_url)], 2).await;
    let api = stack.api(APP);
    let unknown = uuid::Uuid::new_v4();
    for (method, path, body) in [
        (reqwest::Method::POST, "/v1/tasks".to_owned(), Some(classify("during"))),
        (reqwest::Method::POST, "/v1/runs".to_owned(), Some(json!({"scopeId": "s1"}))),
        (reqwest::Method::GET, format!("/v1/tasks/{unknown}"), None),
    ] {
        let answer = api.send(method, &path, body.map(|b| b.to_string().into_bytes())).await;
        assert_eq!(
            (answer.status, answer.body["error"]["code"].as_str()),
            (503, Some("UNAVAILABLE")),
            "{path}"
        );
        assert!(!answer.body.to_string().contains("aitasks_fn"), "no connection detail in the answer");
    }

    // A message arriving now is not lost: it is retried until the database is back.
    let waiting = {
        let client = stack.db.client().await;
        aitasks_store::create_task(&client, &new_task(APP, app_owner("s1"), "while-down"))
            .await
            .unwrap()
            .task()
            .id
    };
    stack.queues.send(&stack.queues.tasks, &json!({"taskId": waiting}).to_string()).await;
    // Delivered twice (its visibility is 2 s), and both times left for later.
    stack.server.wait_for_lines("could not work on the task; the message will be retried", 2).await;
    assert_eq!(stack.stub.calls(), 0, "no provider call while Postgres is down");

    stack.server.set_env("DATABASE_URL", &stack.db.app_url.clone());
    stack.server.restart().await;
    let task = api.wait_terminal(&waiting.to_string()).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 1, "nothing stored while down");
    assert_eq!(stack.db.count("SELECT count(*) FROM runs").await, 0, "nothing stored while down");
}

#[tokio::test]
async fn sqs_down_still_creates_and_the_sweeper_sends_later() {
    let dead_sqs = format!("http://{}", dead_address());
    // A sweep killed between claiming a message and sending it leaves the task looking sent;
    // the resend timer (short here) covers that.
    let mut stack =
        Stack::start_with(&[("AWS_ENDPOINT_URL_SQS", &dead_sqs), ("AITASK_RESEND_AFTER_MS", "3000")]).await;
    let api = stack.api(APP);
    let (status, task) = api.post("/v1/tasks", &classify("sqs-down")).await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    // Two more sweeps, each of which would send an owed message: none could.
    stack.server.wait_for_sweeps(2).await;
    assert_eq!(api.get(&format!("/v1/tasks/{id}")).await.1["status"], "queued");
    assert_eq!(stack.stub.calls(), 0);

    let good_endpoint = stack.queues.endpoint.clone();
    stack.server.set_env("AWS_ENDPOINT_URL_SQS", &good_endpoint);
    stack.server.restart().await;
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "succeeded", "the sweeper sent the message: {task}");
}

#[tokio::test]
async fn provider_down_retries_then_fails_with_the_provider_error() {
    let dead_provider = format!("http://{}/v1", dead_address());
    let stack = Stack::start_with(&[("OPENAI_BASE_URL", &dead_provider)]).await;
    let api = stack.api(APP);
    let (status, task) = api.post("/v1/tasks", &classify("provider-down")).await;
    assert_eq!(status, 201);
    let task = api.wait_terminal(task["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["errorCode"], "WORKFLOW_AI_PROVIDER_ERROR");
    assert_eq!(task["attempts"], 3, "the whole attempt budget was spent");
}
