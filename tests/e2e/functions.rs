//! The four functions end to end: the dev server (as a process) in front of Postgres, the
//! SQS-compatible server and a stub provider speaking the OpenAI wire format.

use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-e2e";

fn classify(effect_key: &str) -> Value {
    json!({
        "owner": {"scopeId": "s1", "usageSubject": {"type": "user", "id": "u1"}},
        "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
    })
}

async fn create(api: &Api, body: &Value) -> String {
    let (status, task) = api.post("/v1/tasks", body).await;
    assert_eq!(status, 201, "create: {task}");
    task["id"].as_str().expect("task id").to_owned()
}

/// Wait until `check` holds (up to the testkit's [`PATIENCE`]).
async fn eventually(what: &str, check: impl Fn() -> bool) {
    wait_until(what, || std::future::ready(check())).await;
}

#[tokio::test]
async fn each_kind_succeeds_and_publishes_its_completion_event() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let requests = [
        (
            json!({"kind": "generate_text", "prompt": "Write a title", "maxOutputChars": 100}),
            json!("stub text"),
        ),
        (
            json!({"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}),
            json!("pos"),
        ),
        (
            json!({"kind": "classify_many", "prompt": "Topics?", "input": "x", "choices": ["a", "b", "c"]}),
            json!(["a"]),
        ),
        (
            json!({"kind": "extract_data", "prompt": "Extract", "input": "Ship Friday", "fields": [
                {"name": "due", "type": "date_time", "description": "", "required": true},
                {"name": "pages", "type": "number", "description": "", "required": false},
                {"name": "tone", "type": "choice", "description": "", "required": true, "choices": ["calm", "urgent"]}]}),
            json!({"due": "2026-11-29T12:00:00Z", "pages": 42, "tone": "calm"}),
        ),
    ];
    let mut ids = Vec::new();
    for (i, (request, _)) in requests.iter().enumerate() {
        let body = json!({"owner": {"scopeId": "s1"}, "stepKey": "step", "effectKey": format!("kind-{i}"),
                          "modelId": "default", "request": request});
        ids.push(create(&api, &body).await);
    }
    for (id, (_, output)) in ids.iter().zip(&requests) {
        let task = api.wait_terminal(id).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        assert_eq!(&task["output"], output);
        assert_eq!(task["attempts"], 1);
        assert_eq!(task["usage"]["inputTokens"], 11);
        assert_eq!(task["usage"]["model"], "stub-model");
    }
    let events: Vec<Value> = stack
        .queues
        .drain(&stack.queues.events, Duration::from_secs(3))
        .await
        .iter()
        .map(|body| serde_json::from_str(body).expect("events are JSON"))
        .collect();
    for id in &ids {
        let event =
            events.iter().find(|e| e["taskId"] == id.as_str()).unwrap_or_else(|| panic!("no event for {id}"));
        assert_eq!(event["type"], "task.settled");
        assert_eq!(event["status"], "succeeded");
        assert_eq!(event["appId"], APP);
    }
    assert_eq!(stack.db.count("SELECT count(*) FROM task_events WHERE delivered_at IS NULL").await, 0);
}

#[tokio::test]
async fn a_used_effect_key_returns_the_first_task() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let (status, first) = api.post("/v1/tasks", &classify("once")).await;
    assert_eq!(status, 201);
    let mut other = classify("once");
    other["request"]["prompt"] = json!("Something else entirely");
    let (status, second) = api.post("/v1/tasks", &other).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["id"], first["id"]);
    assert_eq!(second["request"]["prompt"], "Sentiment?", "the existing task is returned untouched");
    let (status, by_key) = api.get("/v1/tasks?effectKey=once").await;
    assert_eq!((status, &by_key["id"]), (200, &first["id"]));
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 1);
}

#[tokio::test]
async fn cancel_during_a_slow_call_ends_canceled_within_two_seconds_and_aborts_the_call() {
    let stack = Stack::start().await;
    stack.stub.set_default(Reply::slow(Duration::from_secs(30)));
    let api = stack.api(APP);
    let id = create(&api, &classify("slow")).await;
    let running = api.wait_for(&id, |t| t["status"] == "running").await;
    assert_eq!(running["status"], "running");
    eventually("the provider call to start", || stack.stub.calls() == 1).await;

    let started = Instant::now();
    let (status, answer) = api.post(&format!("/v1/tasks/{id}/cancel"), &json!({})).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["cancelRequestedAt"].is_string());
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "canceled", "{task}");
    assert!(started.elapsed() < Duration::from_secs(2), "canceled after {:?}", started.elapsed());
    assert_eq!(task["errorCode"], "WORKFLOW_AI_CANCELED");
    assert_eq!(task["output"], Value::Null);
    eventually("the stub to see the request aborted", || stack.stub.aborted() == 1).await;
    assert_eq!(stack.stub.completed(), 0);
}

#[tokio::test]
async fn a_500_twice_then_success_ends_succeeded_after_three_attempts() {
    let stack = Stack::start().await;
    stack.stub.script([Reply::status(500), Reply::status(500)]);
    let api = stack.api(APP);
    let id = create(&api, &classify("flaky")).await;
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    assert_eq!(task["attempts"], 3);
    assert_eq!(stack.stub.calls(), 3);
}

#[tokio::test]
async fn a_401_fails_after_one_attempt() {
    let stack = Stack::start().await;
    stack.stub.script([Reply::status(401)]);
    let api = stack.api(APP);
    let id = create(&api, &classify("auth")).await;
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["attempts"], 1);
    assert_eq!(task["errorCode"], "AI_PROVIDER_AUTH");
    // Its message deleted: nothing is left that could call the provider again.
    stack.queues.wait_until_empty(&stack.queues.tasks).await;
    assert_eq!(stack.stub.calls(), 1);
}

#[tokio::test]
async fn one_message_delivered_five_times_calls_the_provider_once() {
    let stack = Stack::start().await;
    stack.stub.set_default(Reply::slow(Duration::from_millis(500)));
    let api = stack.api(APP);
    let id = create(&api, &classify("dup")).await;
    let body = json!({"taskId": id}).to_string();
    for _ in 0..4 {
        stack.queues.send(&stack.queues.tasks, &body).await;
    }
    let task = api.wait_terminal(&id).await;
    assert_eq!((task["status"].as_str(), task["attempts"].as_i64()), (Some("succeeded"), Some(1)));
    // Every delivery taken and deleted.
    stack.queues.wait_until_empty(&stack.queues.tasks).await;
    assert_eq!(stack.stub.calls(), 1, "duplicates claim nothing");
    assert_eq!(stack.db.count("SELECT count(*) FROM task_events").await, 1);
}

#[tokio::test]
async fn a_dev_server_killed_mid_call_is_recovered_by_the_sweeper() {
    let mut stack = Stack::start().await;
    stack.stub.script([Reply::slow(Duration::from_secs(60))]);
    let api = stack.api(APP);
    let id = create(&api, &classify("killed")).await;
    api.wait_for(&id, |t| t["status"] == "running").await;
    eventually("the provider call to start", || stack.stub.calls() == 1).await;
    stack.server.kill().await;
    stack.server.restart().await;
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    assert_eq!(task["attempts"], 2, "the sweeper requeued the orphaned attempt");
}

#[tokio::test]
async fn a_lost_send_is_repaired_by_the_sweeper() {
    let missing = "http://sqs.us-east-1.localhost/000000000000/no-such-queue";
    let mut stack = Stack::start_with(&[("AITASK_TASK_QUEUE_URL", missing)]).await;
    let api = stack.api(APP);
    let id = create(&api, &classify("lost")).await;
    assert_eq!(
        stack.db.count(&format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND status = 'queued' AND message_sent_at IS NULL")).await,
        1,
        "the send failed and the task is still owed its message"
    );
    let tasks_queue = stack.queues.tasks.clone();
    stack.server.set_env("AITASK_TASK_QUEUE_URL", &tasks_queue);
    stack.server.restart().await;
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "succeeded", "{task}");
}

#[tokio::test]
async fn another_tenant_sees_nothing_and_bad_tokens_are_refused() {
    let stack = Stack::start().await;
    let owner = stack.api(APP);
    let (_, run) = owner.post("/v1/runs", &json!({"scopeId": "s1"})).await;
    let run_id = run["id"].as_str().expect("run id").to_owned();
    let task_id = create(&owner, &classify("mine")).await;
    owner.wait_terminal(&task_id).await;

    let stranger = stack.api("app-other");
    for path in [
        format!("/v1/runs/{run_id}"),
        format!("/v1/tasks/{task_id}"),
        "/v1/tasks?effectKey=mine".to_owned(),
        format!("/v1/tasks/{task_id}/events"),
        format!("/v1/tasks/{task_id}/callbacks"),
        format!("/v1/tasks/{task_id}/batch"),
        format!("/v1/tasks/{task_id}/attempts"),
    ] {
        let (status, body) = stranger.get(&path).await;
        assert_eq!((status, &body["error"]["code"]), (404, &json!("NOT_FOUND")), "GET {path}");
    }
    for path in [format!("/v1/runs/{run_id}/cancel"), format!("/v1/tasks/{task_id}/cancel")] {
        let (status, _) = stranger.post(&path, &json!({})).await;
        assert_eq!(status, 404, "POST {path}");
    }
    assert_eq!(stranger.get("/v1/runs").await, (200, json!({"runs": []})), "no run of another tenant listed");
    let (status, summary) = stranger.get("/v1/summary").await;
    assert_eq!((status, &summary["examined"], &summary["costs"]), (200, &json!(0), &json!([])), "{summary}");
    let mut on_their_run = classify("x");
    on_their_run.as_object_mut().expect("object").remove("owner");
    on_their_run["runId"] = json!(run_id);
    assert_eq!(stranger.post("/v1/tasks", &on_their_run).await.0, 404);
    assert_eq!(
        stranger.post("/v1/tasks/release", &json!({"scopeId": "s1", "effectKey": "mine"})).await.1
            ["released"],
        false
    );
    assert_eq!(stranger.delete("/v1/scopes/s1/tasks").await.1["deleted"], 0);
    assert_eq!(stranger.delete("/v1/scopes/s1/tasks?sourceId=doc").await.1["deleted"], 0);
    let (status, _) = stranger.get(&format!("/v1/tasks/{task_id}?wait=1")).await;
    assert_eq!(status, 404, "waiting on another tenant's task");
    // The same effect key in another tenant is another task, never the owner's.
    let (status, theirs) = stranger.post("/v1/tasks", &classify("mine")).await;
    assert_eq!(status, 201, "{theirs}");
    assert_ne!(theirs["id"].as_str(), Some(task_id.as_str()));
    assert_eq!(stranger.get("/v1/unreleased-sources").await.1["sources"], json!([]));
    let (_, still) = owner.get(&format!("/v1/tasks/{task_id}")).await;
    assert_eq!(still["status"], "succeeded", "the owner's data is untouched");

    let none_alg = {
        let part = |v: Value| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        format!(
            "{}.{}.",
            part(json!({"alg": "none", "typ": "JWT"})),
            part(json!({"app_id": APP, "exp": 4_000_000_000u64}))
        )
    };
    let bad_tokens = [
        ("expired", Some(token_with(DEV_SECRET, json!({"app_id": APP, "expIn": -3600})))),
        ("not yet valid", Some(token_with(DEV_SECRET, json!({"app_id": APP, "expIn": 7200, "nbfIn": 3600})))),
        ("wrongly signed", Some(token_with("another-secret", json!({"app_id": APP, "expIn": 3600})))),
        ("alg none", Some(none_alg)),
        ("no exp", Some(token_with(DEV_SECRET, json!({"app_id": APP})))),
        ("no app claim", Some(token_with(DEV_SECRET, json!({"sub": "x", "expIn": 3600})))),
        ("garbage", Some("not.a.jwt".to_owned())),
        ("missing", None),
    ];
    for (name, token) in bad_tokens {
        let api = owner.with_token(token);
        let (status, body) = api.get(&format!("/v1/tasks/{task_id}")).await;
        assert_eq!((status, &body["error"]["code"]), (401, &json!("UNAUTHORIZED")), "{name}");
        assert_eq!(api.post("/v1/tasks", &classify("sneaky")).await.0, 401, "{name}");
    }
    // Within the 60 s leeway a just-expired token still passes.
    let lenient = owner.with_token(Some(token_with(DEV_SECRET, json!({"app_id": APP, "expIn": -30}))));
    assert_eq!(lenient.get(&format!("/v1/tasks/{task_id}")).await.0, 200);
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 2, "the owner's and the stranger's own");
}

#[tokio::test]
async fn bad_requests_get_their_4xx_and_store_nothing() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let (_, run) = api.post("/v1/runs", &json!({"scopeId": "s1"})).await;
    let run_id = run["id"].as_str().expect("run id").to_owned();
    let (_, canceled_run) = api.post("/v1/runs", &json!({"scopeId": "s1"})).await;
    let canceled_id = canceled_run["id"].as_str().expect("run id").to_owned();
    assert_eq!(api.post(&format!("/v1/runs/{canceled_id}/cancel"), &json!({})).await.1["state"], "canceled");

    let on_run = |id: &str| {
        let mut body = classify("k");
        body.as_object_mut().expect("object").remove("owner");
        body["runId"] = json!(id);
        body
    };
    let mut huge = classify("big");
    huge["request"]["input"] = json!({"text": "x".repeat(100_001)});
    let mut unknown_model = classify("m");
    unknown_model["modelId"] = json!("gpt-nope");
    let mut both = classify("b");
    both["runId"] = json!(run_id);
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("invalid JSON", b"{\"stepKey\": ".to_vec(), 400, "INVALID_REQUEST"),
        ("unknown field", serde_json::to_vec(&json!({"extra": 1})).unwrap(), 400, "INVALID_REQUEST"),
        ("both runId and owner", serde_json::to_vec(&both).unwrap(), 400, "INVALID_REQUEST"),
        ("over 100000 bytes", serde_json::to_vec(&huge).unwrap(), 413, "AI_TASK_INPUT_TOO_LARGE"),
        ("unknown model", serde_json::to_vec(&unknown_model).unwrap(), 400, "AI_MODEL_UNKNOWN"),
        (
            "missing run",
            serde_json::to_vec(&on_run(&uuid::Uuid::new_v4().to_string())).unwrap(),
            404,
            "NOT_FOUND",
        ),
        (
            "canceled run",
            serde_json::to_vec(&on_run(&canceled_id)).unwrap(),
            409,
            "WORKFLOW_AI_RUN_UNAVAILABLE",
        ),
    ];
    for (name, body, status, code) in cases {
        let answer = api.send(reqwest::Method::POST, "/v1/tasks", Some(body)).await;
        assert_eq!(
            (answer.status, answer.body["error"]["code"].as_str()),
            (status, Some(code)),
            "{name}: {}",
            answer.body
        );
    }
    let (status, body) = api.post("/v1/tasks", &json!({"stepKey": ""})).await;
    assert_eq!(status, 400);
    assert!(body["error"]["details"].as_array().is_some_and(|d| !d.is_empty()), "details name the paths");
    assert_eq!(api.get("/v1/tasks/not-a-uuid").await.0, 404);
    assert_eq!(api.get("/v1/nowhere").await.0, 404);
    assert_eq!(api.delete("/v1/tasks").await.0, 405, "wrong method on a known path");
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 0, "nothing was stored");
    assert_eq!(api.post("/v1/tasks", &classify("fine")).await.0, 201, "and the server still serves");
}

#[tokio::test]
async fn a_run_cancel_cancels_its_queued_tasks_and_aborts_its_running_one() {
    let stack = Stack::start_with(&[("AITASK_RECORD_CONCURRENCY", "1"), ("AITASK_LOCAL_POLLERS", "1")]).await;
    stack.stub.set_default(Reply::slow(Duration::from_secs(30)));
    let api = stack.api(APP);
    let (_, run) = api.post("/v1/runs", &json!({"scopeId": "s1", "actor": {"userId": "user-1"}})).await;
    let run_id = run["id"].as_str().expect("run id").to_owned();
    let mut ids = Vec::new();
    for key in ["first", "second"] {
        let mut body = classify(key);
        body.as_object_mut().expect("object").remove("owner");
        body["runId"] = json!(run_id);
        ids.push(create(&api, &body).await);
    }
    eventually("one task to reach the provider", || stack.stub.calls() == 1).await;
    let (status, canceled) = api.post(&format!("/v1/runs/{run_id}/cancel"), &json!({})).await;
    assert_eq!((status, canceled["state"].as_str()), (200, Some("canceled")));
    for id in &ids {
        let task = api.wait_terminal(id).await;
        assert_eq!(task["status"], "canceled", "{task}");
        assert_eq!(task["usageUserId"], "user-1");
    }
    eventually("the running call to be aborted", || stack.stub.aborted() == 1).await;
    // Both messages taken and deleted: the queued task's can no longer reach the provider.
    stack.queues.wait_until_empty(&stack.queues.tasks).await;
    assert_eq!(stack.stub.calls(), 1, "the queued task never reached the provider");
}

#[tokio::test]
async fn a_poison_message_lands_in_the_dlq() {
    let stack = Stack::start().await;
    stack.queues.send(&stack.queues.tasks, "this is not a task").await;
    let dead = stack.queues.drain(&stack.queues.dlq, Duration::from_secs(15)).await;
    assert_eq!(dead, vec!["this is not a task".to_owned()]);
}
