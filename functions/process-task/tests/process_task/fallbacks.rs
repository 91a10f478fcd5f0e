//! A profile's fallbacks take over within the same attempt when it fails with a retryable
//! error, and only then: the task records which profile and model answered, while its
//! `modelId` and configuration hash stay what the caller asked for.

use std::time::Duration;

use crate::common::*;
use aitasks_testkit::*;
use serde_json::{json, Value};

async fn settled(db: &TestDb, id: uuid::Uuid) -> (String, Option<String>, Option<Value>, String) {
    let row = db
        .client()
        .await
        .query_one("SELECT status, error_code, usage, model_id FROM tasks WHERE id = $1", &[&id])
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2), row.get(3))
}

#[tokio::test]
async fn a_retryable_failure_moves_to_the_fallback_in_the_same_attempt() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let primary = StubProvider::start().await;
    let backup = StubProvider::start().await;
    let models = json!({
        "default": {"model": "primary-model", "baseUrl": primary.base_url, "fallbacks": ["backup"]},
        "backup": {"model": "backup-model", "baseUrl": backup.base_url},
    })
    .to_string();
    let app = app(&db, &queues, &primary, &[("AITASK_MODELS", &models), ("AITASK_MAX_ATTEMPTS", "1")]).await;

    // The primary is down: the backup answers, in the one attempt the task has.
    primary.set_default(Reply::status(503));
    let down = task(&db, "down", "Sentiment?", 1).await;
    let response = process_task::handle(&app, event(&[&down], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty());
    let (status, code, usage, model_id) = settled(&db, down.id).await;
    assert_eq!((status.as_str(), code), ("succeeded", None));
    let usage = usage.unwrap();
    assert_eq!((usage["profile"].as_str(), model_id.as_str()), (Some("backup"), "default"), "{usage}");
    assert_eq!((primary.calls(), backup.calls()), (1, 1));

    // A non-retryable failure (bad credentials) is not handed on: the backup would fail the same.
    primary.set_default(Reply::status(401));
    let refused = task(&db, "refused", "Sentiment?", 1).await;
    process_task::handle(&app, event(&[&refused], Duration::from_secs(60))).await.unwrap();
    let (status, code, _, _) = settled(&db, refused.id).await;
    assert_eq!((status.as_str(), code.as_deref()), ("failed", Some("AI_PROVIDER_AUTH")));
    assert_eq!((primary.calls(), backup.calls()), (2, 1), "the backup was not called");

    // Both down: the attempt fails with the last one's error.
    primary.set_default(Reply::status(503));
    backup.set_default(Reply::status(500));
    let both = task(&db, "both", "Sentiment?", 1).await;
    process_task::handle(&app, event(&[&both], Duration::from_secs(60))).await.unwrap();
    let (status, code, _, _) = settled(&db, both.id).await;
    assert_eq!((status.as_str(), code.as_deref()), ("failed", Some("WORKFLOW_AI_PROVIDER_ERROR")));
    assert_eq!((primary.calls(), backup.calls()), (3, 2));

    // The primary answers: no fallback call, and usage names the primary.
    primary.set_default(Reply::Auto);
    let fine = task(&db, "fine", "Sentiment?", 1).await;
    process_task::handle(&app, event(&[&fine], Duration::from_secs(60))).await.unwrap();
    let (status, _, usage, _) = settled(&db, fine.id).await;
    assert_eq!((status.as_str(), usage.unwrap()["profile"].as_str()), ("succeeded", Some("default")));
    assert_eq!((primary.calls(), backup.calls()), (4, 2));
}

#[tokio::test]
async fn an_anthropic_fallback_takes_over_from_a_failing_openai_profile() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let primary = StubProvider::start().await;
    primary.set_default(Reply::status(429));
    let anthropic = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-fallback"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-fallback-2026",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "classification", "input": {"choice": "pos"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 20, "output_tokens": 5}})))
        .expect(1)
        .mount(&anthropic)
        .await;
    let models = json!({
        "default": {"model": "primary-model", "baseUrl": primary.base_url, "fallbacks": ["claude"]},
        "claude": {"provider": "anthropic", "model": "claude-x", "baseUrl": format!("{}/v1", anthropic.uri()),
                   "apiKeyEnv": "FALLBACK_KEY"},
    })
    .to_string();
    let app = app(
        &db,
        &queues,
        &primary,
        &[("AITASK_MODELS", &models), ("AITASK_MAX_ATTEMPTS", "1"), ("FALLBACK_KEY", "sk-ant-fallback")],
    )
    .await;
    let rate_limited = task(&db, "rate-limited", "Sentiment?", 1).await;
    process_task::handle(&app, event(&[&rate_limited], Duration::from_secs(60))).await.unwrap();
    let (status, _, usage, model_id) = settled(&db, rate_limited.id).await;
    let usage = usage.unwrap();
    assert_eq!(status, "succeeded");
    assert_eq!(
        (usage["profile"].as_str(), usage["model"].as_str(), model_id.as_str()),
        (Some("claude"), Some("claude-fallback-2026"), "default"),
        "usage says what ran; modelId what was asked: {usage}"
    );
    assert_eq!(primary.calls(), 1);
}
