//! The Bedrock client against a local HTTP server speaking the Converse API's wire format
//! (restJson1: `POST /model/{modelId}/converse`, errors named by `x-amzn-errortype`) that
//! accepts only requests SigV4-signed with the role's credentials: it signs each request again
//! with the same secret and compares the signatures, as Bedrock does. Its profile says
//! `"stream": false`; the streamed call is `bedrock_stream`'s.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{
    CancellationToken, HttpProvider, ModelProfile, ModelProfiles, Provider, ProviderError,
};
use aws_sdk_bedrockruntime::config::{retry::RetryConfig, BehaviorVersion, Credentials, Region};
use serde_json::{json, Value};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const ACCESS_KEY: &str = "AKIDREHEARSAL";
pub(crate) const SECRET: &str = "role-secret-key-do-not-log";
const MODEL: &str = "anthropic.claude-3-haiku-20240307-v1:0";

/// Whether `request`'s SigV4 signature is the one `SECRET` gives (the headers it says it signed,
/// its own timestamp, region us-east-1, service bedrock).
pub(crate) fn signed_with_secret(request: &Request) -> bool {
    let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let Some(authorization) = header("authorization") else { return false };
    let Some(signed) = authorization.split("SignedHeaders=").nth(1).and_then(|s| s.split(',').next()) else {
        return false;
    };
    if !authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/"))
        || !authorization.contains("/us-east-1/bedrock/aws4_request")
    {
        return false;
    }
    let Some(time) = header("x-amz-date").and_then(|d| {
        chrono::NaiveDateTime::parse_from_str(&d, "%Y%m%dT%H%M%SZ")
            .ok()
            .map(|t| SystemTime::from(t.and_utc()))
    }) else {
        return false;
    };
    let headers: Vec<(String, String)> =
        signed.split(';').filter_map(|name| header(name).map(|value| (name.to_owned(), value))).collect();
    let identity = Credentials::new(ACCESS_KEY, SECRET, None, None, "stub").into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("bedrock")
        .time(time)
        .settings(aws_sigv4::http_request::SigningSettings::default())
        .build()
        .unwrap()
        .into();
    let signable = aws_sigv4::http_request::SignableRequest::new(
        request.method.as_str(),
        request.url.as_str(),
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        aws_sigv4::http_request::SignableBody::Bytes(&request.body),
    )
    .unwrap();
    let (_, signature) = aws_sigv4::http_request::sign(signable, &params).unwrap().into_parts();
    authorization.ends_with(&format!("Signature={signature}"))
}

/// Converse answers in turn, to signed requests only.
struct Converse(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Converse {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if !signed_with_secret(request) {
            return error(403, "InvalidSignatureException");
        }
        self.0.lock().unwrap().pop_front().unwrap_or_else(|| error(500, "InternalServerException"))
    }
}

pub(crate) fn answer(input: Value, stop_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "output": {"message": {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "tooluse_1", "name": "classification", "input": input}}]}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 30, "outputTokens": 7, "totalTokens": 37},
        "metrics": {"latencyMs": 120},
    }))
}

pub(crate) fn error(status: u16, kind: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .insert_header("x-amzn-errortype", kind)
        .set_body_json(json!({"message": format!("{kind} from the stub")}))
}

pub(crate) async fn serve(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex("^/model/[^/]+/converse$"))
        .respond_with(Converse(Mutex::new(replies.into())))
        .mount(&server)
        .await;
    server
}

pub(crate) fn client(secret: &str) -> HttpProvider {
    let config = aws_sdk_bedrockruntime::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(ACCESS_KEY, secret, None, None, "test"))
        .http_client(
            aws_smithy_http_client::Builder::new()
                .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                    aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
                ))
                .build_https(),
        )
        .retry_config(RetryConfig::disabled())
        .build();
    HttpProvider::new(Duration::from_secs(5))
        .unwrap()
        .with_bedrock(aws_sdk_bedrockruntime::Client::from_conf(config))
}

/// The profile of a Bedrock model at `uri`, streaming or not.
pub(crate) fn profile_at(uri: &str, stream: bool) -> ModelProfile {
    let models = json!({"claude": {"provider": "bedrock", "model": MODEL, "baseUrl": uri, "stream": stream}})
        .to_string();
    let profiles =
        ModelProfiles::from_lookup(|name| (name == "AITASK_MODELS").then(|| models.clone())).unwrap();
    let profile = profiles.resolve("claude").unwrap().clone();
    assert!(profile.api_key.is_none(), "Bedrock uses the role, never a key");
    profile
}

/// A profile that says `"stream": false`: one Converse call, one answer.
fn profile(server: &MockServer) -> ModelProfile {
    profile_at(&server.uri(), false)
}

async fn run(server: &MockServer, secret: &str) -> Result<aitasks_providers::Completion, ProviderError> {
    let request = AiRequest::parse(
        &json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]}),
        &Path::root(),
    )
    .unwrap();
    client(secret).run(&profile(server), &request, &CancellationToken::new()).await
}

#[tokio::test]
async fn a_profile_that_does_not_stream_answers_through_one_signed_converse_call() {
    let server = serve(vec![answer(json!({"choice": "pos"}), "tool_use")]).await;
    let done = run(&server, SECRET).await.expect("success");
    assert_eq!(done.output, json!("pos"));
    assert_eq!((done.usage.input_tokens, done.usage.output_tokens, done.usage.calls), (30, 7, 1));
    let received = &server.received_requests().await.unwrap()[0];
    assert!(received.url.path().ends_with("/converse"), "not streamed: {}", received.url);
    assert!(received.url.path().contains("anthropic.claude-3-haiku-20240307-v1%3A0"), "{}", received.url);
    let sent: Value = received.body_json().unwrap();
    assert_eq!(sent["inferenceConfig"]["maxTokens"], 200);
    assert_eq!(sent["inferenceConfig"]["temperature"], 0.0);
    assert!(sent["system"][0]["text"].as_str().unwrap().starts_with("Sentiment?"));
    assert_eq!(sent["toolConfig"]["toolChoice"], json!({"tool": {"name": "classification"}}));
    let schema = &sent["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"];
    assert_eq!(schema["properties"]["choice"]["enum"], json!(["pos", "neg"]));
}

#[tokio::test]
async fn a_bad_answer_is_repaired_through_the_tool_s_error_result() {
    let server = serve(vec![
        answer(json!({"choice": "maybe"}), "tool_use"),
        answer(json!({"choice": "neg"}), "tool_use"),
    ])
    .await;
    let done = run(&server, SECRET).await.expect("repaired");
    assert_eq!((done.output, done.usage.calls, done.usage.input_tokens), (json!("neg"), 2, 60));
    let second: Value = server.received_requests().await.unwrap()[1].body_json().unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the question, the bad tool call, its error result");
    assert_eq!(messages[1]["content"][0]["toolUse"]["toolUseId"], "tooluse_1");
    let result = &messages[2]["content"][0]["toolResult"];
    assert_eq!((result["toolUseId"].as_str(), result["status"].as_str()), (Some("tooluse_1"), Some("error")));
    assert!(result["content"][0]["text"].as_str().unwrap().contains("not valid"));
}

#[tokio::test]
async fn stops_and_errors_map_to_our_classes() {
    let cases: Vec<(ResponseTemplate, bool, &str)> = vec![
        (answer(json!({}), "guardrail_intervened"), false, "AI_MODEL_REFUSED"),
        (answer(json!({}), "max_tokens"), false, "AI_OUTPUT_TRUNCATED"),
        (error(429, "ThrottlingException"), true, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(503, "ServiceUnavailableException"), true, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(424, "ModelErrorException"), true, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(403, "AccessDeniedException"), false, "AI_PROVIDER_AUTH"),
        (error(400, "ValidationException"), false, "WORKFLOW_AI_PROVIDER_ERROR"),
        (error(404, "ResourceNotFoundException"), false, "AI_MODEL_UNKNOWN"),
    ];
    for (reply, retryable, code) in cases {
        let server = serve(vec![reply]).await;
        let error = run(&server, SECRET).await.unwrap_err();
        assert_eq!((error.is_retryable(), error.code().as_str()), (retryable, code), "{error:?}");
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            1,
            "no retry inside the client: {error:?}"
        );
        if code == "WORKFLOW_AI_PROVIDER_ERROR" && retryable {
            assert!(!format!("{error:?}").contains(SECRET));
        }
    }
}

#[tokio::test]
async fn a_request_signed_with_another_secret_is_refused_as_bad_credentials() {
    let server = serve(vec![answer(json!({"choice": "pos"}), "tool_use")]).await;
    let error = run(&server, "not-the-role-s-secret").await.unwrap_err();
    assert_eq!(error.code().as_str(), "AI_PROVIDER_AUTH", "{error:?}");
    assert!(!format!("{error} {error:?}").contains("not-the-role-s-secret"));
    // And the right secret passes the same check, so the check is not a formality.
    assert!(run(&serve(vec![answer(json!({"choice": "neg"}), "tool_use")]).await, SECRET).await.is_ok());
}
