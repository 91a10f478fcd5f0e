//! The OpenAI-compatible client against a real local HTTP server speaking the chat-completions
//! wire format, with expectations on how often it was called.

use std::time::{Duration, Instant};

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{ApiKey, CancellationToken, HttpProvider, ModelProfile, Provider, ProviderError};
use serde_json::{json, Map, Value};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-secret-123";

fn profile(server: &MockServer) -> ModelProfile {
    ModelProfile {
        id: "default".into(),
        provider: "openai".into(),
        model: "test-model".into(),
        base_url: format!("{}/v1", server.uri()),
        api_key: Some(ApiKey::new(KEY)),
        key_secret_arn: None,
        secret_headers: Vec::new(),
        settings: Map::new(),
        prices: None,
        call: Default::default(),
        timeout: None,
        limits: None,
        batch: None,
        stream: false,
    }
}

fn request(value: Value) -> AiRequest {
    AiRequest::parse(&value, &Path::root()).expect("valid request")
}

fn classify() -> AiRequest {
    request(
        json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]}),
    )
}

/// A chat completion whose message content is `answer` serialized.
fn completion(answer: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model-2026",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.to_string()}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }))
}

async fn run(
    server: &MockServer,
    request: &AiRequest,
) -> Result<aitasks_providers::Completion, ProviderError> {
    let client = HttpProvider::new(Duration::from_millis(500)).unwrap();
    client.run(&profile(server), request, &CancellationToken::new()).await
}

#[tokio::test]
async fn each_kind_succeeds_with_a_strict_structured_output_call() {
    let cases = [
        (
            json!({"kind": "generate_text", "prompt": "Write a title", "maxOutputChars": 40}),
            json!({"text": "A title"}),
            json!("A title"),
            "generated_text",
        ),
        (
            json!({"kind": "classify", "prompt": "Sentiment?", "input": {"t": "great"}, "choices": ["pos", "neg"]}),
            json!({"choice": "pos"}),
            json!("pos"),
            "classification",
        ),
        (
            json!({"kind": "classify_many", "prompt": "Topics?", "input": "x", "choices": ["a", "b", "c"]}),
            json!({"choices": ["c", "a", "c"]}),
            json!(["a", "c"]),
            "classifications",
        ),
        (
            json!({"kind": "extract_data", "prompt": "Extract", "input": "Due Friday", "fields": [
                {"name": "due", "type": "date_time", "description": "", "required": true},
                {"name": "owner", "type": "text", "description": "", "required": false}]}),
            json!({"due": "2026-12-04T17:00:00Z", "owner": null}),
            json!({"due": "2026-12-04T17:00:00Z"}),
            "structured_data",
        ),
    ];
    for (spec, answer, output, schema_name) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(header("authorization", format!("Bearer {KEY}").as_str()))
            .and(body_partial_json(json!({
                "model": "test-model",
                "temperature": 0.0,
                "response_format": {"type": "json_schema", "json_schema": {"name": schema_name, "strict": true}},
            })))
            .respond_with(completion(answer))
            .expect(1)
            .mount(&server)
            .await;
        let request = request(spec);
        let done = run(&server, &request).await.expect("success");
        assert_eq!(done.output, output);
        assert_eq!((done.usage.input_tokens, done.usage.output_tokens, done.usage.calls), (12, 3, 1));
        assert_eq!(done.usage.model, "test-model-2026");

        let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
        assert_eq!(sent["messages"][0]["role"], "system");
        assert!(sent["messages"][0]["content"].as_str().unwrap().starts_with(request.prompt()));
        assert_eq!(sent["messages"][1]["role"], "user");
        assert!(sent["max_tokens"].as_u64().unwrap() >= 64);
        assert_eq!(sent["response_format"]["json_schema"]["schema"]["additionalProperties"], false);
    }
}

#[tokio::test]
async fn a_429_is_retryable_and_carries_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429).insert_header("retry-after", "7").set_body_string("slow down"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert!(error.is_retryable());
    assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(error.code().as_str(), "WORKFLOW_AI_PROVIDER_ERROR");
}

#[tokio::test]
async fn a_500_is_retryable_and_not_retried_by_the_client() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(500)).expect(1).mount(&server).await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Server { status: 500, .. }), "{error:?}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_response_slower_than_the_timeout_is_a_retryable_timeout() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"choice": "pos"})).set_delay(Duration::from_secs(3)))
        .expect(1)
        .mount(&server)
        .await;
    let started = Instant::now();
    let error = run(&server, &classify()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Timeout(_)), "{error:?}");
    assert!(error.is_retryable());
    assert!(started.elapsed() < Duration::from_secs(2), "gave up at the 500 ms timeout");
}

#[tokio::test]
async fn a_non_json_body_is_a_retryable_malformed_response() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>gateway</html>"))
        .expect(1)
        .mount(&server)
        .await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Malformed(_)), "{error:?}");
    assert!(error.is_retryable());
}

/// What a provider sends is input: a body past 16 MiB is refused, not read into memory whole.
#[tokio::test]
async fn a_body_over_the_response_bound_is_a_malformed_response() {
    let server = MockServer::start().await;
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(17 * 1024 * 1024));
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string(huge))
        .expect(1)
        .mount(&server)
        .await;
    let client = HttpProvider::new(Duration::from_secs(10)).unwrap();
    let error = client.run(&profile(&server), &classify(), &CancellationToken::new()).await.unwrap_err();
    assert!(matches!(&error, ProviderError::Malformed(m) if m.contains("over 16777216 bytes")), "{error:?}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn an_answer_that_breaks_the_schema_is_repaired_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"choice": "maybe"})))
        .up_to_n_times(1)
        .expect(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"choice": "neg"})))
        .expect(1)
        .mount(&server)
        .await;
    let done = run(&server, &classify()).await.expect("repaired");
    assert_eq!(done.output, json!("neg"));
    assert_eq!(done.usage.calls, 2);
    assert_eq!(done.usage.input_tokens, 24, "usage adds up every turn");
    let second: Value = server.received_requests().await.unwrap()[1].body_json().unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "system, user, the bad answer, the repair request");
    assert!(messages[3]["content"].as_str().unwrap().contains("not valid"), "the problems are stated");
}

#[tokio::test]
async fn an_answer_that_always_breaks_the_schema_fails_after_three_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"label": "pos"})))
        .expect(3)
        .mount(&server)
        .await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert!(matches!(error, ProviderError::LoopFailed(_)), "{error:?}");
    assert_eq!(error.code().as_str(), "WORKFLOW_AI_LOOP_FAILED");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_401_is_an_auth_error_after_one_call_and_hides_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string(format!("Incorrect API key provided: {KEY}")),
        )
        .expect(1)
        .mount(&server)
        .await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert_eq!(error.code().as_str(), "AI_PROVIDER_AUTH");
    assert!(!error.is_retryable());
    assert!(!format!("{error} {error:?}").contains(KEY));
}

#[tokio::test]
async fn other_4xx_are_not_retryable_and_never_echo_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(format!("bad request from key {KEY}")))
        .expect(1)
        .mount(&server)
        .await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Rejected { status: 400, .. }), "{error:?}");
    assert!(!error.is_retryable());
    assert!(!format!("{error} {error:?}").contains(KEY), "{error}");
    // The body is named by its size and hash, taken once the key was scrubbed from it.
    assert!(format!("{error}").contains(&digest("bad request from key ***")), "{error}");

    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(404)).expect(1).mount(&server).await;
    let error = run(&server, &classify()).await.unwrap_err();
    assert_eq!((error.code().as_str(), error.is_retryable()), ("AI_MODEL_UNKNOWN", false));
}

#[tokio::test]
async fn a_connection_error_is_retryable() {
    let server = MockServer::start().await;
    let profile = ModelProfile { base_url: "http://127.0.0.1:9/v1".into(), ..profile(&server) };
    let client = HttpProvider::new(Duration::from_millis(500)).unwrap();
    let error = client.run(&profile, &classify(), &CancellationToken::new()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Connection(_) | ProviderError::Timeout(_)), "{error:?}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn cancel_during_a_slow_answer_ends_the_call_within_200_ms() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"choice": "pos"})).set_delay(Duration::from_secs(10)))
        .expect(1)
        .mount(&server)
        .await;
    let client = HttpProvider::new(Duration::from_secs(30)).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let profile = profile(&server);
    let request = classify();
    let call = tokio::spawn(async move { client.run(&profile, &request, &cancel).await });
    // Let the request reach the server, then cancel.
    while server.received_requests().await.unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let canceled_at = Instant::now();
    trigger.cancel();
    let result = call.await.unwrap();
    let took = canceled_at.elapsed();
    assert_eq!(result.unwrap_err(), ProviderError::Canceled);
    assert!(took < Duration::from_millis(200), "the call ended {took:?} after the cancel");
}

/// A profile as `AITASK_MODELS` gives it, pointed at `server`.
fn profile_from(server: &MockServer, entry: Value) -> ModelProfile {
    let mut entry = entry;
    entry["baseUrl"] = json!(format!("{}/v1", server.uri()));
    let models = json!({"p": entry}).to_string();
    let profiles = aitasks_providers::ModelProfiles::from_lookup(|name| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "OPENAI_API_KEY" => Some(KEY.to_owned()),
        _ => None,
    })
    .expect("profiles");
    profiles.resolve("p").unwrap().clone()
}

#[tokio::test]
async fn a_profile_s_settings_are_sent_with_every_call() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("openai-organization", "org-7"))
        .respond_with(completion(json!({"choice": "pos"})))
        .expect(1)
        .mount(&server)
        .await;
    // A reasoning model: no temperature, the cap in max_completion_tokens.
    let profile = profile_from(
        &server,
        json!({"model": "o-mini", "temperature": null, "maxTokensField": "max_completion_tokens", "seed": 42,
               "reasoningEffort": "low", "maxOutputTokens": 150, "headers": {"OpenAI-Organization": "org-7"}}),
    );
    let client = HttpProvider::new(Duration::from_secs(5)).unwrap();
    client.run(&profile, &classify(), &CancellationToken::new()).await.expect("success");
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!(sent["model"], "o-mini");
    assert!(sent.get("temperature").is_none() && sent.get("max_tokens").is_none(), "{sent}");
    assert_eq!(sent["max_completion_tokens"], 150, "the profile's cap under the kind's 200");
    assert_eq!((sent["seed"].as_i64(), sent["reasoning_effort"].as_str()), (Some(42), Some("low")));

    // The defaults: temperature 0 and max_tokens.
    let plain = MockServer::start().await;
    Mock::given(method("POST")).respond_with(completion(json!({"choice": "pos"}))).mount(&plain).await;
    client
        .run(&profile_from(&plain, json!({"model": "m"})), &classify(), &CancellationToken::new())
        .await
        .unwrap();
    let sent: Value = plain.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!((sent["temperature"].as_f64(), sent["max_tokens"].as_u64()), (Some(0.0), Some(200)));
    assert!(sent.get("seed").is_none() && sent.get("max_completion_tokens").is_none());
}

#[tokio::test]
async fn a_profile_s_timeout_overrides_the_client_s() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"choice": "pos"})).set_delay(Duration::from_secs(2)))
        .mount(&server)
        .await;
    let profile = profile_from(&server, json!({"model": "m", "timeoutMs": 200}));
    let client = HttpProvider::new(Duration::from_secs(30)).unwrap();
    let started = Instant::now();
    let error = client.run(&profile, &classify(), &CancellationToken::new()).await.unwrap_err();
    assert_eq!(error, ProviderError::Timeout(Duration::from_millis(200)));
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn a_refusal_and_a_truncated_answer_are_their_own_errors_with_no_repair_turn() {
    let cases = [
        (
            json!({"index": 0, "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}),
            "AI_MODEL_REFUSED",
        ),
        (
            json!({"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "content_filter"}),
            "AI_MODEL_REFUSED",
        ),
        (
            json!({"index": 0, "message": {"role": "assistant", "content": "{\"choi"}, "finish_reason": "length"}),
            "AI_OUTPUT_TRUNCATED",
        ),
    ];
    for (choice, code) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "model": "m", "choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 200}})))
            .expect(1)
            .mount(&server)
            .await;
        let error = run(&server, &classify()).await.unwrap_err();
        assert_eq!(error.code().as_str(), code, "{error:?}");
        assert!(!error.is_retryable(), "{code} is not retried");
        if code == "AI_OUTPUT_TRUNCATED" {
            assert_eq!(error, ProviderError::Truncated { limit: 200 });
        }
    }
}

/// A header whose value is a credential comes from its secret (the variable process-task fills
/// from Secrets Manager at cold start), reaches the provider, and is scrubbed like the key.
#[tokio::test]
async fn a_secret_header_is_read_sent_and_never_shown() {
    let server = MockServer::start().await;
    let value = "hv-secret-9d1e";
    Mock::given(method("POST"))
        .and(header("x-api-key", value))
        .and(header("anthropic-beta", "b1"))
        .respond_with(completion(json!({"choice": "pos"})))
        .expect(1)
        .mount(&server)
        .await;
    let models = json!({"p": {"model": "m", "baseUrl": format!("{}/v1", server.uri()),
        "headers": {"anthropic-beta": "b1"},
        "secretHeaders": {"X-Api-Key": "arn:aws:secretsmanager:r:1:secret:h"}}})
    .to_string();
    let lookup = |name: &str| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "AITASK_PROFILE_HEADER:p:x-api-key" => Some(value.to_owned()),
        _ => None,
    };
    let profiles = aitasks_providers::ModelProfiles::from_lookup(lookup).expect("profiles");
    assert_eq!(
        aitasks_providers::profile_header_variable("p", "X-Api-Key"),
        "AITASK_PROFILE_HEADER:p:x-api-key"
    );
    let profile = profiles.resolve("p").unwrap().clone();
    assert!(!format!("{profile:?}").contains(value), "Debug never shows the value");
    let client = HttpProvider::new(Duration::from_secs(5)).unwrap();
    client.run(&profile, &classify(), &CancellationToken::new()).await.expect("the header was sent");

    // A provider that echoes it gets it scrubbed, like the key.
    let echo = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(format!("bad header {value}")))
        .mount(&echo)
        .await;
    let mut echoed = profile.clone();
    echoed.base_url = format!("{}/v1", echo.uri());
    let error = client.run(&echoed, &classify(), &CancellationToken::new()).await.unwrap_err();
    assert!(!format!("{error} {error:?}").contains(value), "{error}");
}

/// Words marked in the prompt, which a provider's body or its model's answer may echo.
const MARKER: &str = "PROMPT-MARKER-31c7";

fn digest(text: &str) -> String {
    use sha2::Digest;
    format!("{} chars, sha256 {}", text.chars().count(), &hex::encode(sha2::Sha256::digest(text))[..12])
}

/// Every way a provider's or a model's words become an error (an error body of each status, a
/// body that is not JSON or lacks its choices, a refusal, answers that kept failing the checker)
/// keeps them out of the error's text: it has the provider's code, the status and the text's
/// size and hash, so a log line built from it never quotes the prompt.
#[tokio::test]
async fn errors_name_what_the_provider_wrote_by_code_size_and_hash_only() {
    let body = json!({"error": {"message": format!("rejected: {MARKER}"), "type": "invalid_request_error",
                                "code": "content_policy_violation"}})
    .to_string();
    let refusal = format!("I will not answer {MARKER}");
    let choice = |message: Value| {
        ResponseTemplate::new(200).set_body_json(json!({"model": "m", "choices": [{"index": 0,
            "message": message, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}))
    };
    let cases: Vec<(ResponseTemplate, &str, Option<String>)> = vec![
        (
            ResponseTemplate::new(400).set_body_string(body.clone()),
            "HTTP 400: content_policy_violation",
            Some(digest(&body)),
        ),
        (ResponseTemplate::new(429).set_body_string(body.clone()), "rate limiting", Some(digest(&body))),
        (ResponseTemplate::new(503).set_body_string(body.clone()), "HTTP 503", Some(digest(&body))),
        (
            ResponseTemplate::new(404).set_body_string(body.clone()),
            "unknown model: test-model",
            Some(digest(&body)),
        ),
        (ResponseTemplate::new(200).set_body_string(format!("<p>{MARKER}</p>")), "not JSON", None),
        (ResponseTemplate::new(200).set_body_json(json!({"echo": MARKER})), "no choices[0]", None),
        (
            choice(json!({"role": "assistant", "content": null, "refusal": refusal})),
            "refused",
            Some(digest(&refusal)),
        ),
        (
            choice(json!({"role": "assistant", "content": format!("{{\"choice\": \"{MARKER}\"}}")})),
            "kept failing",
            None,
        ),
    ];
    for (response, names, hashed) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(response).mount(&server).await;
        let error = run(&server, &classify()).await.unwrap_err();
        let (text, debug) = (error.to_string(), format!("{error:?}"));
        assert!(!text.contains(MARKER) && !debug.contains(MARKER), "{text} / {debug}");
        assert!(text.contains(names), "{names:?} in {text}");
        assert!(text.contains("chars, sha256 "), "the size and hash: {text}");
        if let Some(hashed) = hashed {
            assert!(text.contains(&hashed), "{hashed:?} in {text}");
        }
    }
}
