//! Which answers are tried again, after how long, and how often.

use std::time::Duration;

use aitasks_client::{Error, ErrorCode, Outcome, RetryPolicy, TaskBody, TaskStatus};
use serde_json::json;

use crate::stub::{task_json, Answer, Stub, TASK_ID};

fn id() -> uuid::Uuid {
    TASK_ID.parse().unwrap()
}

#[tokio::test]
async fn a_429_with_retry_after_then_a_503_then_success_answers_the_task() {
    let stub = Stub::script(vec![
        Answer::error(429, "WORKFLOW_AI_RATE_LIMIT").header("retry-after", 1),
        Answer::error(503, "UNAVAILABLE"),
        Answer::json(200, task_json(TASK_ID, "succeeded")),
    ])
    .await;
    let task = stub.client(5).get(id()).await.unwrap();
    assert_eq!((task.status, task.output), (TaskStatus::Succeeded, Some(json!("spam"))));
    let hits = stub.hits();
    assert_eq!(hits.len(), 3, "two retries, then the answer");
    assert!(hits.iter().all(|h| h.target == format!("/v1/tasks/{TASK_ID}")));
    assert!(hits.iter().all(|h| h.authorization.as_deref() == Some("Bearer stub-token")));
    // `Retry-After: 1` is honoured although the policy's own pauses are at most 100 ms.
    assert!(hits[1].at - hits[0].at >= Duration::from_secs(1), "waited for Retry-After");
}

/// The tenant's read rate (docs/api.md, "Read rate") is a 429 like any other: its `Retry-After` is
/// waited for, then the read is sent again.
#[tokio::test]
async fn a_read_over_the_tenants_read_rate_is_sent_again_after_retry_after() {
    let summary = json!({"createdAfter": "2026-01-01T00:00:00Z", "createdBefore": "2026-01-08T00:00:00Z",
        "tasks": {"queued": 0, "running": 0, "succeeded": 2, "failed": 0, "canceled": 0},
        "costs": [], "examined": 2, "complete": true});
    let stub = Stub::script(vec![
        Answer::error(429, "WORKFLOW_AI_READ_RATE").header("retry-after", 1),
        Answer::json(200, summary),
    ])
    .await;
    let answered = stub.client(5).summary(None, None).await.unwrap();
    assert_eq!((answered.tasks.succeeded, answered.examined), (2, 2));
    let hits = stub.hits();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.target == "/v1/summary"));
    assert!(hits[1].at - hits[0].at >= Duration::from_secs(1), "waited for Retry-After");

    // Past what the policy waits, the refusal is the answer, with its code.
    let stub =
        Stub::script(vec![Answer::error(429, "WORKFLOW_AI_READ_RATE").header("retry-after", 900)]).await;
    let error = stub.client(5).summary(None, None).await.unwrap_err();
    assert_eq!(stub.hits().len(), 1);
    let api = error.api().unwrap();
    assert_eq!((api.retry_after, api.error_code()), (Some(900), Some(ErrorCode::ReadRate)));
}

#[tokio::test]
async fn a_400_is_never_retried_and_carries_its_code_details_and_request_id() {
    let invalid = Answer::json(
        400,
        json!({"error": {"code": "INVALID_REQUEST", "message": "the request is invalid",
               "details": [{"path": "request.kind", "message": "must be one of ..."}], "moreProblems": 3}}),
    );
    let stub = Stub::script(vec![invalid, Answer::json(201, task_json(TASK_ID, "queued"))]).await;
    let error = stub.client(5).create(&TaskBody::unchecked(json!({"stepKey": "s"}))).await.unwrap_err();
    assert_eq!(stub.hits().len(), 1, "a 400 is the answer, not a reason to try again");
    let api = error.api().expect("the API's error");
    assert_eq!((api.status, api.code.as_str()), (400, "INVALID_REQUEST"));
    assert_eq!(api.error_code(), Some(ErrorCode::InvalidRequest));
    assert_eq!(api.details[0].path, "request.kind");
    assert_eq!((api.more_problems, api.request_id.as_deref()), (Some(3), Some("req-0")));
    assert_eq!((error.status(), error.code()), (Some(400), Some("INVALID_REQUEST")));
}

#[tokio::test]
async fn other_4xx_answers_are_never_retried() {
    for (status, code) in [(401, "UNAUTHORIZED"), (404, "NOT_FOUND"), (409, "WORKFLOW_AI_RUN_UNAVAILABLE")] {
        let stub = Stub::script(vec![Answer::error(status, code)]).await;
        let error = stub.client(5).cancel(id()).await.unwrap_err();
        assert_eq!((error.status(), error.code()), (Some(status), Some(code)));
        assert_eq!(stub.hits().len(), 1, "{status} is not retried");
    }
}

#[tokio::test]
async fn tries_are_bounded_and_the_last_error_is_answered() {
    let stub = Stub::script(vec![Answer::error(503, "UNAVAILABLE")]).await;
    let error = stub.client(3).get(id()).await.unwrap_err();
    assert_eq!((error.status(), error.code()), (Some(503), Some("UNAVAILABLE")));
    assert_eq!(stub.hits().len(), 3);
    assert_eq!(error.request_id(), Some("req-2"), "the last try's request id");
}

#[tokio::test]
async fn a_retry_after_longer_than_the_policy_waits_is_answered_at_once() {
    let stub =
        Stub::script(vec![Answer::error(429, "WORKFLOW_AI_TENANT_QUOTA").header("retry-after", 3600)]).await;
    let error = stub.client(5).get(id()).await.unwrap_err();
    assert_eq!(stub.hits().len(), 1);
    assert_eq!(error.api().unwrap().retry_after, Some(3600));
    assert_eq!(error.api().unwrap().error_code(), Some(ErrorCode::TenantQuota));
}

/// A run create carries an `Idempotency-Key`, made once per call and sent again on every try,
/// so it is tried again like every other call (a 500 or a lost answer may have made the run:
/// the retry answers that run).
#[tokio::test]
async fn a_run_create_sends_one_key_on_every_try_and_is_retried_like_any_call() {
    let run = json!({"id": TASK_ID, "appId": "app", "scopeId": "s", "state": "running",
                     "cancelRequestedAt": null, "createdAt": "2026-12-03T10:00:00Z",
                     "updatedAt": "2026-12-03T10:00:00Z"});
    let stub = Stub::script(vec![
        Answer::error(500, "INTERNAL"),
        Answer::error(503, "UNAVAILABLE"),
        Answer::json(200, run.clone()),
    ])
    .await;
    let client = stub.client(5);
    let made = client.create_run("s", Some("u1")).await.unwrap();
    assert_eq!(made.scope_id, "s");
    let hits = stub.hits();
    assert_eq!(hits.len(), 3, "a 500 and a 503, then the run");
    assert!(hits.iter().all(|h| h.method == "POST" && h.target == "/v1/runs"));
    assert!(hits.iter().all(|h| h.body == json!({"scopeId": "s", "actor": {"userId": "u1"}})));
    let key = hits[0].idempotency_key.clone().expect("a key");
    assert!(uuid::Uuid::parse_str(&key).is_ok(), "{key}");
    assert!(hits.iter().all(|h| h.idempotency_key.as_deref() == Some(key.as_str())), "one key: {hits:?}");

    // Another call is another run: another key. A key of the caller's is sent as given.
    client.create_run("s", None).await.unwrap();
    client.create_run_with_key("s", None, "order-7/run").await.unwrap();
    let keys: Vec<Option<String>> = stub.hits()[3..].iter().map(|h| h.idempotency_key.clone()).collect();
    assert_ne!(keys[0].as_deref(), Some(key.as_str()));
    assert_eq!(keys[1].as_deref(), Some("order-7/run"));
    let stub = Stub::script(vec![Answer::error(422, "IDEMPOTENCY_KEY_REUSED")]).await;
    let error = stub.client(5).create_run_with_key("other", None, "order-7/run").await.unwrap_err();
    assert_eq!(
        (error.status(), error.code(), stub.hits().len()),
        (Some(422), Some("IDEMPOTENCY_KEY_REUSED"), 1)
    );
}

#[tokio::test]
async fn a_create_tells_a_new_task_from_an_existing_one() {
    let stub = Stub::script(vec![
        Answer::json(201, task_json(TASK_ID, "queued")),
        Answer::json(200, task_json(TASK_ID, "succeeded")),
    ])
    .await;
    let client = stub.client(1);
    let body = TaskBody::unchecked(json!({"effectKey": "k1"}));
    let first = client.create(&body).await.unwrap();
    let second = client.create(&body).await.unwrap();
    assert_eq!((first.outcome, second.outcome), (Outcome::Created, Outcome::Existing));
    assert_eq!(first.task.id, second.task.id);
    assert_eq!(stub.hits()[0].body, json!({"effectKey": "k1"}), "the body as given");
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error_after_the_tries() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let client = aitasks_client::Client::builder(format!("http://127.0.0.1:{port}"))
        .token("t")
        .retry(RetryPolicy { max_tries: 2, base_delay: Duration::from_millis(5), ..RetryPolicy::default() })
        .build()
        .unwrap();
    let error = client.get(id()).await.unwrap_err();
    assert!(matches!(error, Error::Transport { .. }), "{error}");
    assert_eq!(error.status(), None);
}

#[tokio::test]
async fn waiting_long_polls_until_the_task_ends() {
    let stub = Stub::start(|n, _| {
        let status = if n < 2 { "running" } else { "succeeded" };
        Answer::json(200, task_json(TASK_ID, status))
    })
    .await;
    let mut seen = Vec::new();
    let task = stub
        .client(1)
        .wait_with(id(), Duration::from_secs(60), Duration::from_secs(20), |t| seen.push(t.status))
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::Succeeded);
    assert_eq!(seen, [TaskStatus::Running, TaskStatus::Running, TaskStatus::Succeeded]);
    let targets: Vec<String> = stub.hits().into_iter().map(|h| h.target).collect();
    assert!(targets.iter().all(|t| t.ends_with("?wait=20")), "{targets:?}");

    // A task that does not end within the deadline: the last read, as an error.
    let stub = Stub::script(vec![Answer::json(200, task_json(TASK_ID, "queued"))]).await;
    let error = stub.client(1).wait(id(), Duration::from_secs(1)).await.unwrap_err();
    let Error::WaitDeadline(task) = error else { panic!("{error}") };
    assert_eq!(task.status, TaskStatus::Queued);
    // Whole seconds, rounded down: the wait never runs past the deadline.
    assert_eq!(stub.hits().len(), 1);
    assert!(stub.hits()[0].target.ends_with("?wait=0"));
}

/// Hands out `token-1`, `token-2`, ...: one per call.
struct Counting(std::sync::atomic::AtomicUsize);

impl aitasks_client::TokenProvider for Counting {
    fn token(&self) -> aitasks_client::TokenFuture<'_> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Box::pin(async move { Ok(format!("token-{n}")) })
    }
}

#[tokio::test]
async fn a_token_provider_is_asked_before_every_try() {
    let stub = Stub::script(vec![
        Answer::error(503, "UNAVAILABLE"),
        Answer::json(200, task_json(TASK_ID, "queued")),
    ])
    .await;
    let client = aitasks_client::Client::builder(&stub.url)
        .token_provider(std::sync::Arc::new(Counting(0.into())))
        .retry(RetryPolicy { max_tries: 2, base_delay: Duration::from_millis(5), ..RetryPolicy::default() })
        .build()
        .unwrap();
    client.get(id()).await.unwrap();
    let sent: Vec<Option<String>> = stub.hits().into_iter().map(|h| h.authorization).collect();
    assert_eq!(sent, [Some("Bearer token-1".to_owned()), Some("Bearer token-2".to_owned())]);
    assert!(format!("{client:?}").contains("Provider"), "the client's Debug never shows a token");
    let fixed = aitasks_client::Client::new(&stub.url, "secret-token").unwrap();
    assert!(!format!("{fixed:?}").contains("secret-token"));
    let error = aitasks_client::Client::builder("ftp://x").token("t").build().unwrap_err();
    assert!(matches!(error, Error::Config(_)), "{error}");
}
