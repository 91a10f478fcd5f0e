//! How answers are read: listings page by page, unknown fields kept, bodies that are not the API's.

use aitasks_client::{tasks_of, Error, ListTasks, TaskFilter, TaskStatus};
use futures::TryStreamExt;
use serde_json::json;

use crate::stub::{task_json, Answer, Stub, TASK_ID};

#[tokio::test]
async fn a_listing_streams_every_page_passing_next_as_after() {
    let ids: Vec<String> = (0..5).map(|i| format!("01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e0{i}")).collect();
    let pages = ids.clone();
    let stub = Stub::start(move |n, _| {
        let page: Vec<_> = pages.iter().skip(n * 2).take(2).map(|id| task_json(id, "queued")).collect();
        let mut body = json!({"tasks": page});
        if n < 2 {
            body["next"] = json!(pages[n * 2 + 1]);
        }
        Answer::json(200, body)
    })
    .await;
    let listing = ListTasks {
        status: Some(TaskStatus::Queued),
        limit: 2,
        ..tasks_of(TaskFilter::Scope("a scope/with space".into()))
    };
    let tasks: Vec<_> = stub.client(1).list(listing).try_collect().await.unwrap();
    let listed: Vec<String> = tasks.iter().map(|t| t.id.to_string()).collect();
    assert_eq!(listed, ids);
    let targets: Vec<String> = stub.hits().into_iter().map(|h| h.target).collect();
    assert_eq!(
        targets,
        [
            "/v1/tasks?scopeId=a%20scope%2Fwith%20space&status=queued&limit=2".to_owned(),
            format!("/v1/tasks?scopeId=a%20scope%2Fwith%20space&status=queued&after={}&limit=2", ids[1]),
            format!("/v1/tasks?scopeId=a%20scope%2Fwith%20space&status=queued&after={}&limit=2", ids[3]),
        ]
    );
}

#[tokio::test]
async fn fields_a_newer_server_adds_are_kept_and_printed_back() {
    let mut body = task_json(TASK_ID, "failed");
    body["errorCode"] = json!("WORKFLOW_AI_PROVIDER_ERROR");
    body["somethingNew"] = json!({"x": 1});
    let stub = Stub::script(vec![Answer::json(200, body)]).await;
    let task = stub.client(1).get(TASK_ID.parse().unwrap()).await.unwrap();
    assert_eq!(task.error_code.as_deref(), Some("WORKFLOW_AI_PROVIDER_ERROR"));
    assert_eq!(task.extra["somethingNew"], json!({"x": 1}));
    assert_eq!(serde_json::to_value(&task).unwrap()["somethingNew"], json!({"x": 1}));
}

#[tokio::test]
async fn an_answer_that_is_not_the_apis_is_an_unexpected_answer() {
    let stub = Stub::script(vec![Answer::json(502, json!("<html>bad gateway</html>"))]).await;
    let error = stub.client(1).get(TASK_ID.parse().unwrap()).await.unwrap_err();
    assert!(matches!(error, Error::UnexpectedAnswer { status: 502, .. }), "{error}");
    let stub = Stub::script(vec![Answer::json(200, json!({"id": "not a task"}))]).await;
    let error = stub.client(1).get(TASK_ID.parse().unwrap()).await.unwrap_err();
    assert!(matches!(error, Error::UnexpectedAnswer { status: 200, .. }), "{error}");
}

#[tokio::test]
async fn an_answer_larger_than_any_the_api_sends_is_not_read() {
    let huge = "x".repeat(aitasks_client::MAX_ANSWER_BYTES + 1);
    let stub = Stub::script(vec![Answer::json(200, json!(huge))]).await;
    let error = stub.client(1).get(TASK_ID.parse().unwrap()).await.unwrap_err();
    let Error::UnexpectedAnswer { status: 200, reason, .. } = &error else { panic!("{error}") };
    assert!(reason.contains("over 8388608 bytes"), "{reason}");
}

#[tokio::test]
async fn a_narrowed_listing_attempts_and_the_summary_send_their_parameters_and_read_their_answers() {
    let attempts = json!({"attempts": [
        {"attempt": 1, "startedAt": "2026-02-01T10:00:00Z", "endedAt": "2026-02-01T10:00:01Z", "outcome": "retried",
         "profile": null, "modelId": null, "errorCode": "WORKFLOW_AI_PROVIDER_ERROR", "errorMessage": "HTTP 500",
         "usage": null, "estimatedCostUsd": null},
        {"attempt": 2, "startedAt": "2026-02-01T10:00:03Z", "endedAt": null, "outcome": "running",
         "profile": null, "modelId": null, "errorCode": null, "errorMessage": null, "usage": null,
         "estimatedCostUsd": null}], "more": false});
    let summary = json!({"createdAfter": "2026-01-25T00:00:00Z", "createdBefore": "2026-02-01T00:00:00Z",
        "tasks": {"queued": 1, "running": 0, "succeeded": 2, "failed": 0, "canceled": 0},
        "costs": [{"day": "2026-01-31", "modelId": "default", "tasks": 3, "inputTokens": 22, "outputTokens": 14,
                   "estimatedCostUsd": 0.5}], "examined": 3, "complete": true});
    let stub = Stub::script(vec![
        Answer::json(200, json!({"tasks": []})),
        Answer::json(200, attempts),
        Answer::json(200, summary),
    ])
    .await;
    let client = stub.client(1);
    let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&chrono::Utc);
    let listing = ListTasks {
        kind: Some(aitasks_client::Kind::ExtractData),
        model_id: Some("fast model".into()),
        created_after: Some(at("2026-01-31T12:00:00+01:00")),
        ..tasks_of(TaskFilter::Scope("s".into()))
    };
    assert!(client.list_page(&listing).await.unwrap().tasks.is_empty());
    let id = TASK_ID.parse().unwrap();
    let read = client.task_attempts(id).await.unwrap();
    assert_eq!(read.attempts.len(), 2);
    assert_eq!(read.attempts[0].outcome, aitasks_client::AttemptOutcome::Retried);
    assert_eq!(read.attempts[0].error_code.as_deref(), Some("WORKFLOW_AI_PROVIDER_ERROR"));
    assert_eq!(
        (read.attempts[1].outcome, read.attempts[1].ended_at),
        (aitasks_client::AttemptOutcome::Running, None)
    );
    let read = client.summary(None, Some(at("2026-02-01T00:00:00Z"))).await.unwrap();
    assert_eq!((read.tasks.succeeded, read.costs[0].input_tokens, read.complete), (2, 22, true));
    assert_eq!(read.costs[0].day.to_string(), "2026-01-31");

    let targets: Vec<String> = stub.hits().into_iter().map(|h| h.target).collect();
    assert_eq!(
        targets,
        [
            "/v1/tasks?scopeId=s&kind=extract_data&modelId=fast%20model&createdAfter=2026-01-31T11%3A00%3A00.000000Z&limit=100"
                .to_owned(),
            format!("/v1/tasks/{TASK_ID}/attempts"),
            "/v1/summary?createdBefore=2026-02-01T00%3A00%3A00.000000Z".to_owned(),
        ]
    );
}
