//! The Anthropic client against a local HTTP server speaking the Messages API's wire format:
//! `x-api-key` and `anthropic-version` headers, the answer schema as a forced tool's input
//! schema, the answer in a `tool_use` block, errors in Anthropic's shapes.

use std::time::Duration;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{
    CancellationToken, HttpProvider, ModelProfile, ModelProfiles, Provider, ProviderError,
};
use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ant-test-secret-456";

fn profile(server: &MockServer) -> ModelProfile {
    let models = json!({"claude": {"provider": "anthropic", "model": "claude-test", "baseUrl": format!("{}/v1", server.uri())}})
        .to_string();
    let profiles = ModelProfiles::from_lookup(|name| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "ANTHROPIC_API_KEY" => Some(KEY.to_owned()),
        _ => None,
    })
    .expect("profiles");
    profiles.resolve("claude").unwrap().clone()
}

fn classify() -> AiRequest {
    AiRequest::parse(
        &json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]}),
        &Path::root(),
    )
    .unwrap()
}

/// A Messages answer that calls the tool with `input`.
fn tool_answer(input: Value, stop_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test-2026",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "classification", "input": input}],
        "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 40, "output_tokens": 9},
    }))
}

fn error(status: u16, kind: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(
        json!({"type": "error", "error": {"type": kind, "message": format!("{kind} for {KEY}")}}),
    )
}

async fn run(server: &MockServer) -> Result<aitasks_providers::Completion, ProviderError> {
    let client = HttpProvider::new(Duration::from_secs(5)).unwrap();
    client.run(&profile(server), &classify(), &CancellationToken::new()).await
}

#[tokio::test]
async fn an_answer_comes_from_the_forced_tool_call() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(tool_answer(json!({"choice": "pos"}), "tool_use"))
        .expect(1)
        .mount(&server)
        .await;
    let done = run(&server).await.expect("success");
    assert_eq!(done.output, json!("pos"));
    assert_eq!((done.usage.input_tokens, done.usage.output_tokens, done.usage.calls), (40, 9, 1));
    assert_eq!(done.usage.model, "claude-test-2026");
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!(sent["model"], "claude-test");
    assert_eq!(sent["max_tokens"], 200);
    assert_eq!(sent["temperature"], 0.0);
    assert!(sent["system"].as_str().unwrap().starts_with("Sentiment?"), "the prompt is the system text");
    assert_eq!(sent["messages"].as_array().unwrap().len(), 1);
    assert_eq!(sent["tool_choice"], json!({"type": "tool", "name": "classification"}));
    assert_eq!(sent["tools"][0]["input_schema"]["properties"]["choice"]["enum"], json!(["pos", "neg"]));
}

#[tokio::test]
async fn a_bad_answer_is_repaired_through_the_tool_s_error_result() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(tool_answer(json!({"choice": "maybe"}), "tool_use"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(tool_answer(json!({"choice": "neg"}), "tool_use"))
        .mount(&server)
        .await;
    let done = run(&server).await.expect("repaired");
    assert_eq!((done.output, done.usage.calls, done.usage.input_tokens), (json!("neg"), 2, 80));
    let second: Value = server.received_requests().await.unwrap()[1].body_json().unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the question, the bad tool call, its error result");
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    let result = &messages[2]["content"][0];
    assert_eq!(
        (result["type"].as_str(), result["tool_use_id"].as_str()),
        (Some("tool_result"), Some("toolu_01"))
    );
    assert_eq!(result["is_error"], true);
    assert!(result["content"].as_str().unwrap().contains("not valid"));
}

#[tokio::test]
async fn refusal_and_truncation_are_their_own_errors() {
    for (stop_reason, code) in [("refusal", "AI_MODEL_REFUSED"), ("max_tokens", "AI_OUTPUT_TRUNCATED")] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(tool_answer(json!({}), stop_reason))
            .expect(1)
            .mount(&server)
            .await;
        let error = run(&server).await.unwrap_err();
        assert_eq!(error.code().as_str(), code, "{error:?}");
        assert!(!error.is_retryable());
    }
}

#[tokio::test]
async fn errors_in_anthropic_s_shapes_map_to_our_classes() {
    let rate_limited = error(429, "rate_limit_error").insert_header("retry-after", "12");
    let cases: Vec<(ResponseTemplate, bool, &str)> = vec![
        (rate_limited, true, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(529, "overloaded_error"), true, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(500, "api_error"), true, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(401, "authentication_error"), false, "AI_PROVIDER_AUTH"),
        (error(400, "invalid_request_error"), false, "WORKFLOW_AI_PROVIDER_ERROR"),
    ];
    for (answer, retryable, code) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(answer).expect(1).mount(&server).await;
        let error = run(&server).await.unwrap_err();
        assert_eq!((error.is_retryable(), error.code().as_str()), (retryable, code), "{error:?}");
        assert!(!format!("{error} {error:?}").contains(KEY), "the key is never echoed: {error}");
        if let ProviderError::RateLimited { retry_after, .. } = &error {
            assert_eq!(*retry_after, Some(Duration::from_secs(12)));
        }
    }
}
