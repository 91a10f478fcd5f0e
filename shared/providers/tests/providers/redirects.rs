//! Provider calls follow no redirect: a 3xx answer ends the call with a clear, non-retryable
//! error, and the address it names never sees a request, so never a key (`x-api-key`,
//! `Authorization`) nor a `secretHeaders` value.

use std::time::Duration;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{
    BatchClient, CancellationToken, HttpProvider, ModelProfile, ModelProfiles, Provider, ProviderError,
};
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ant-redirect-secret-789";
const HEADER_VALUE: &str = "hv-redirect-secret-790";

/// An Anthropic profile on `server` with its key and a secret header.
fn profile(server: &MockServer) -> ModelProfile {
    let models = json!({"claude": {"provider": "anthropic", "model": "claude-test",
        "baseUrl": format!("{}/v1", server.uri()), "secretHeaders": {"x-tenant-secret": "arn:h"}}})
    .to_string();
    let profiles = ModelProfiles::from_lookup(|name| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "ANTHROPIC_API_KEY" => Some(KEY.to_owned()),
        "AITASK_PROFILE_HEADER:claude:x-tenant-secret" => Some(HEADER_VALUE.to_owned()),
        _ => None,
    })
    .expect("profiles");
    profiles.resolve("claude").unwrap().clone()
}

/// The provider's address answers every call with a 302 to `elsewhere` (another port, so another
/// origin), which would answer 200.
async fn redirecting_to(elsewhere: &MockServer) -> MockServer {
    let provider = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(302).insert_header("location", format!("{}/v1/messages", elsewhere.uri())),
        )
        .mount(&provider)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(elsewhere)
        .await;
    provider
}

/// What `elsewhere` received, as the credential values it saw.
async fn credentials_seen(elsewhere: &MockServer) -> (usize, Vec<String>) {
    let requests = elsewhere.received_requests().await.unwrap_or_default();
    let values = requests
        .iter()
        .flat_map(|request| request.headers.iter().map(|(_, value)| value.to_str().unwrap_or("").to_owned()))
        .filter(|value| value.contains(KEY) || value.contains(HEADER_VALUE))
        .collect();
    (requests.len(), values)
}

fn assert_redirect_refused(error: &ProviderError) {
    assert!(matches!(error, ProviderError::Rejected { status: 302, .. }), "{error:?}");
    assert!(!error.is_retryable(), "the same address redirects again: {error:?}");
    let message = error.public_message();
    assert!(message.contains("redirect"), "the task says why: {message}");
}

#[tokio::test]
async fn an_on_demand_call_answered_with_a_redirect_sends_nothing_to_the_other_host() {
    let elsewhere = MockServer::start().await;
    let provider = redirecting_to(&elsewhere).await;
    let request = AiRequest::parse(
        &json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]}),
        &Path::root(),
    )
    .unwrap();
    let client = HttpProvider::new(Duration::from_secs(5)).unwrap();
    let error = client.run(&profile(&provider), &request, &CancellationToken::new()).await.unwrap_err();

    assert_eq!(credentials_seen(&elsewhere).await, (0, Vec::new()), "the other host saw no request");
    assert_eq!(provider.received_requests().await.unwrap().len(), 1, "one call, not retried");
    assert_redirect_refused(&error);
}

#[tokio::test]
async fn a_batch_call_answered_with_a_redirect_sends_nothing_to_the_other_host() {
    let elsewhere = MockServer::start().await;
    let provider = redirecting_to(&elsewhere).await;
    let client = BatchClient::new(Duration::from_secs(5)).unwrap();
    let error = client.status(&profile(&provider), "msgbatch_01").await.unwrap_err();

    assert_eq!(credentials_seen(&elsewhere).await, (0, Vec::new()), "the other host saw no request");
    assert_redirect_refused(&error);
}
