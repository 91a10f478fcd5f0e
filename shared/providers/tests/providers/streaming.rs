//! Streamed answers (docs/api.md, "Live output") against local servers speaking each format's
//! server-sent events: the answer is assembled into the one a whole call gives (output, usage,
//! model, refusals, truncation, repair turns), the tap is told the answer's text in order and
//! each call's begin and end, a server that answers a streamed call with one JSON body is read
//! as one answer, and an error event midway is the error its status would be.

use std::sync::Mutex;
use std::time::Duration;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{
    CancellationToken, HttpProvider, ModelProfile, ModelProfiles, NoLimits, Provider, ProviderError, Tap,
};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A tap that keeps what it is told: `[` at a call's begin, `]` at its end, the text between.
#[derive(Default)]
struct Kept(Mutex<String>);

impl Tap for Kept {
    fn begin(&self) {
        self.0.lock().unwrap().push('[');
    }
    fn text(&self, text: &str) {
        assert!(!text.is_empty(), "a tap is never told empty text");
        self.0.lock().unwrap().push_str(text);
    }
    fn end(&self) {
        self.0.lock().unwrap().push(']');
    }
}

fn profile(server: &MockServer, provider: &str) -> ModelProfile {
    let models =
        json!({"p": {"provider": provider, "model": "m", "baseUrl": format!("{}/v1", server.uri())}})
            .to_string();
    let profiles = ModelProfiles::from_lookup(|name| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "ANTHROPIC_API_KEY" | "OPENAI_API_KEY" => Some("k".to_owned()),
        _ => None,
    })
    .expect("profiles");
    profiles.resolve("p").unwrap().clone()
}

fn classify() -> AiRequest {
    AiRequest::parse(
        &json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]}),
        &Path::root(),
    )
    .unwrap()
}

fn events(events: &[Value]) -> ResponseTemplate {
    let body: String = events.iter().map(|event| format!("data: {event}\n\n")).collect();
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream")
}

/// OpenAI chunks carrying `pieces` of the content, then the finish and the usage.
fn openai(pieces: &[&str], finish: &str) -> ResponseTemplate {
    let mut all: Vec<Value> = pieces
        .iter()
        .map(|piece| json!({"model": "m-2026", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]}))
        .collect();
    all.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    all.push(json!({"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 5}}));
    let mut body: String = all.iter().map(|event| format!("data: {event}\r\n\r\n")).collect();
    body.push_str(": a comment\n\ndata: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream; charset=utf-8")
}

/// Anthropic events for a tool call whose input is written in `pieces`.
fn anthropic(pieces: &[&str], stop: &str) -> ResponseTemplate {
    let mut all = vec![
        json!({"type": "message_start", "message": {"model": "claude-2026", "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "classification", "input": {}}}),
        json!({"type": "ping"}),
    ];
    for piece in pieces {
        all.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    all.push(json!({"type": "content_block_stop", "index": 0}));
    all.push(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}}));
    all.push(json!({"type": "message_stop"}));
    events(&all)
}

async fn run(profile: &ModelProfile, tap: &Kept) -> Result<aitasks_providers::Completion, ProviderError> {
    let client = HttpProvider::new(Duration::from_secs(5)).unwrap();
    client.run_gated(profile, &classify(), &NoLimits, tap, &CancellationToken::new()).await
}

async fn serving(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(response).mount(&server).await;
    server
}

#[tokio::test]
async fn an_openai_stream_is_the_answer_a_whole_call_gives() {
    let server = serving(openai(&["{\"cho", "ice\": \"p", "os\"}"], "stop")).await;
    let tap = Kept::default();
    let done = run(&profile(&server, "openai"), &tap).await.expect("success");
    assert_eq!(done.output, json!("pos"));
    assert_eq!(
        (done.usage.input_tokens, done.usage.output_tokens, done.usage.model.as_str()),
        (30, 5, "m-2026")
    );
    assert_eq!(tap.0.into_inner().unwrap(), "[{\"choice\": \"pos\"}]");
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!((&sent["stream"], &sent["stream_options"]), (&json!(true), &json!({"include_usage": true})));
}

#[tokio::test]
async fn an_anthropic_stream_is_the_answer_a_whole_call_gives() {
    let server = serving(anthropic(&["{\"choice\"", ": \"neg\"}"], "tool_use")).await;
    let tap = Kept::default();
    let done = run(&profile(&server, "anthropic"), &tap).await.expect("success");
    assert_eq!(done.output, json!("neg"));
    assert_eq!(
        (done.usage.input_tokens, done.usage.output_tokens, done.usage.model.as_str()),
        (40, 9, "claude-2026")
    );
    assert_eq!(tap.0.into_inner().unwrap(), "[{\"choice\": \"neg\"}]");
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!(sent["stream"], true);
}

#[tokio::test]
async fn a_streamed_answer_that_fails_the_checks_is_repaired_and_each_turn_is_its_own_call_to_the_tap() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(openai(&["{\"choice\": ", "\"maybe\"}"], "stop"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).respond_with(openai(&["{\"choice\": \"pos\"}"], "stop")).mount(&server).await;
    let tap = Kept::default();
    let done = run(&profile(&server, "openai"), &tap).await.expect("repaired");
    assert_eq!((done.output, done.usage.calls), (json!("pos"), 2));
    assert_eq!(tap.0.into_inner().unwrap(), "[{\"choice\": \"maybe\"}][{\"choice\": \"pos\"}]");
}

#[tokio::test]
async fn truncation_refusal_and_error_events_are_the_errors_a_whole_answer_gives() {
    let server = serving(openai(&["{\"choice\": \"p"], "length")).await;
    let error = run(&profile(&server, "openai"), &Kept::default()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Truncated { .. }), "{error:?}");

    let server = serving(anthropic(&["{\"choice\""], "max_tokens")).await;
    let error = run(&profile(&server, "anthropic"), &Kept::default()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Truncated { .. }), "{error:?}");

    let refusal =
        json!({"choices": [{"index": 0, "delta": {"refusal": "I cannot."}, "finish_reason": "stop"}]});
    let server = serving(events(&[refusal])).await;
    let error = run(&profile(&server, "openai"), &Kept::default()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Refused(_)), "{error:?}");

    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}});
    let server = serving(events(&[overloaded])).await;
    let error = run(&profile(&server, "anthropic"), &Kept::default()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Server { status: 529, .. }), "{error:?}");
    assert!(error.is_retryable());

    let midway = json!({"error": {"type": "server_error", "message": "boom"}});
    let server =
        serving(events(&[json!({"choices": [{"index": 0, "delta": {"content": "{"}}]}), midway])).await;
    let error = run(&profile(&server, "openai"), &Kept::default()).await.unwrap_err();
    assert!(matches!(error, ProviderError::Server { status: 500, .. }), "{error:?}");
}

#[tokio::test]
async fn a_server_that_answers_a_streamed_call_with_one_body_is_read_as_one_answer() {
    let whole = ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"choice\": \"neg\"}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }));
    let server = serving(whole).await;
    let tap = Kept::default();
    let done = run(&profile(&server, "openai"), &tap).await.expect("success");
    assert_eq!(done.output, json!("neg"));
    assert_eq!(tap.0.into_inner().unwrap(), "[]", "no text told, the call begun and ended");
}

#[tokio::test]
async fn a_profile_that_does_not_stream_asks_for_no_stream() {
    let server = serving(openai(&["{\"choice\": \"pos\"}"], "stop")).await;
    let mut profile = profile(&server, "openai");
    profile.stream = false;
    let error = run(&profile, &Kept::default()).await.unwrap_err();
    // Events where one JSON body was asked for are not JSON: the answer is malformed.
    assert!(matches!(error, ProviderError::Malformed(_)), "{error:?}");
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert!(sent.get("stream").is_none(), "{sent}");
}

#[test]
fn a_profile_s_stream_setting_is_a_boolean_and_changes_no_cached_answer() {
    let read = |stream: Value| {
        let models = json!({"p": {"model": "m", "stream": stream}}).to_string();
        ModelProfiles::from_lookup(|name| (name == "AITASK_MODELS").then(|| models.clone()))
    };
    assert!(read(json!("yes")).is_err());
    let on = read(json!(true)).unwrap().resolve("p").unwrap().clone();
    let off = read(json!(false)).unwrap().resolve("p").unwrap().clone();
    assert!(on.stream && !off.stream);
    assert_eq!(on.config_hash(), off.config_hash(), "a streamed answer is the same answer");
}

/// A hostile stream of millions of empty lines (each a line the reader must take off the
/// front of what it has read) is read in time proportional to its bytes: the call ends with
/// its answer inside its timeout, as a stream of the same size with one long line does.
#[tokio::test]
async fn a_stream_of_millions_of_empty_lines_is_read_in_linear_time() {
    let answer = json!({"choices": [{"index": 0, "delta": {"content": "{\"choice\": \"pos\"}"}, "finish_reason": "stop"}]});
    let mut body = format!("data: {answer}\n\n").into_bytes();
    body.extend(std::iter::repeat_n(b'\n', 12 * 1024 * 1024));
    body.extend_from_slice(b"data: [DONE]\n\n");
    let server = serving(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")).await;
    let client = HttpProvider::new(Duration::from_secs(20)).unwrap();
    let tap = Kept::default();
    let done = client
        .run_gated(&profile(&server, "openai"), &classify(), &NoLimits, &tap, &CancellationToken::new())
        .await
        .expect("the answer, inside the call's timeout");
    assert_eq!(done.output, json!("pos"));
}

/// A model that opens the answer tool twice: the reader's answer is the first block's input,
/// and the live text (what the tap is told) must be that block's input alone, not both blocks'
/// text mixed into something that parses to no answer.
#[tokio::test]
async fn an_anthropic_stream_with_two_answer_blocks_tells_the_tap_only_the_answers_text() {
    let block = |index: u64, id: &str| json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": "classification", "input": {}}});
    let delta = |index: u64, piece: &str| json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}});
    let server = serving(events(&[
        json!({"type": "message_start", "message": {"model": "claude-2026", "usage": {"input_tokens": 4, "output_tokens": 1}}}),
        block(0, "toolu_1"),
        block(1, "toolu_2"),
        delta(0, "{\"choice\": "),
        delta(1, "{\"choice\": \"neg\"}"),
        delta(0, "\"pos\"}"),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]))
    .await;
    let tap = Kept::default();
    let done = run(&profile(&server, "anthropic"), &tap).await.expect("success");
    assert_eq!(done.output, json!("pos"));
    assert_eq!(tap.0.into_inner().unwrap(), "[{\"choice\": \"pos\"}]");
}
