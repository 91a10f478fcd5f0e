//! The Bedrock client's streamed call (a profile that streams, the default) against a local
//! server speaking ConverseStream's wire format: `POST /model/{modelId}/converse-stream`, signed
//! as `bedrock_client`'s stub checks, answered in the AWS event-stream framing
//! (`application/vnd.amazon.eventstream`, written with the SDK's own frame writer): one frame
//! per event, its `:event-type` (or `:exception-type`) header naming it and its JSON payload.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{
    CancellationToken, Completion, ModelProfile, NoLimits, NoTap, Provider, ProviderError, Tap,
};
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::bedrock_client::{self, client, profile_at, signed_with_secret, SECRET};

/// One event-stream frame: `kind` is `event` or `exception`, `name` the event's or exception's.
fn frame(kind: &'static str, name: &'static str, payload: Value) -> Vec<u8> {
    let named = if kind == "event" { ":event-type" } else { ":exception-type" };
    let message = Message::new(payload.to_string().into_bytes())
        .add_header(Header::new(":message-type", HeaderValue::String(kind.into())))
        .add_header(Header::new(named, HeaderValue::String(name.into())))
        .add_header(Header::new(":content-type", HeaderValue::String("application/json".into())));
    let mut bytes = Vec::new();
    aws_smithy_eventstream::frame::write_message_to(&message, &mut bytes).unwrap();
    bytes
}

fn event(name: &'static str, payload: Value) -> Vec<u8> {
    frame("event", name, payload)
}

/// The events up to the last piece of the answer tool's input.
fn opening(pieces: &[&str]) -> Vec<Vec<u8>> {
    let mut frames = vec![
        event("messageStart", json!({"role": "assistant"})),
        event(
            "contentBlockStart",
            json!({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "classification"}}}),
        ),
    ];
    for piece in pieces {
        frames.push(event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": piece}}}),
        ));
    }
    frames
}

/// A whole streamed answer: the tool's input written in `pieces`, then the stop and the usage.
fn answering(pieces: &[&str], stop_reason: &str) -> Vec<Vec<u8>> {
    let mut frames = opening(pieces);
    frames.push(event("contentBlockStop", json!({"contentBlockIndex": 0})));
    frames.push(event("messageStop", json!({"stopReason": stop_reason})));
    frames.push(event(
        "metadata",
        json!({"usage": {"inputTokens": 30, "outputTokens": 7, "totalTokens": 37}, "metrics": {"latencyMs": 120}}),
    ));
    frames
}

fn streamed(frames: Vec<Vec<u8>>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(frames.concat(), "application/vnd.amazon.eventstream")
}

/// ConverseStream answers in turn, to signed requests only.
struct ConverseStream(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for ConverseStream {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if !signed_with_secret(request) {
            return bedrock_client::error(403, "InvalidSignatureException");
        }
        self.0
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| bedrock_client::error(500, "InternalServerException"))
    }
}

async fn serve(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex("^/model/[^/]+/converse-stream$"))
        .respond_with(ConverseStream(Mutex::new(replies.into())))
        .mount(&server)
        .await;
    server
}

/// What a call's tap was told, in order: `<begin>`, each piece of text, `<end>`.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Tap for Seen {
    fn begin(&self) {
        self.0.lock().unwrap().push("<begin>".into());
    }
    fn text(&self, text: &str) {
        self.0.lock().unwrap().push(text.into());
    }
    fn end(&self) {
        self.0.lock().unwrap().push("<end>".into());
    }
}

impl Seen {
    fn seen(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

async fn run(profile: &ModelProfile, tap: &dyn Tap) -> Result<Completion, ProviderError> {
    let request = AiRequest::parse(
        &json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]}),
        &Path::root(),
    )
    .unwrap();
    client(SECRET).run_gated(profile, &request, &NoLimits, tap, &CancellationToken::new()).await
}

#[tokio::test]
async fn a_streamed_answer_is_the_whole_answer_and_the_tap_sees_it_written() {
    let pieces = ["{\"cho", "ice\": \"p", "os\"}"];
    let server = serve(vec![streamed(answering(&pieces, "tool_use"))]).await;
    let tap = Seen::default();
    let done = run(&profile_at(&server.uri(), true), &tap).await.expect("success");

    let whole =
        bedrock_client::serve(vec![bedrock_client::answer(json!({"choice": "pos"}), "tool_use")]).await;
    let one = run(&profile_at(&whole.uri(), false), &NoTap).await.expect("success");
    assert_eq!(done.output, json!("pos"));
    assert_eq!(done.output, one.output);
    assert_eq!(
        (done.usage.input_tokens, done.usage.output_tokens, done.usage.calls),
        (one.usage.input_tokens, one.usage.output_tokens, one.usage.calls)
    );
    assert_eq!(tap.seen(), ["<begin>", "{\"cho", "ice\": \"p", "os\"}", "<end>"]);

    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    assert!(received[0].url.path().ends_with("/converse-stream"), "{}", received[0].url);
    let sent: Value = received[0].body_json().unwrap();
    let converse: Value = whole.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!(sent, converse, "ConverseStream is asked exactly what Converse is");
    assert_eq!(sent["toolConfig"]["toolChoice"], json!({"tool": {"name": "classification"}}));
}

#[tokio::test]
async fn a_bad_streamed_answer_is_repaired_through_the_tool_s_error_result() {
    let server = serve(vec![
        streamed(answering(&["{\"choice\": ", "\"maybe\"}"], "tool_use")),
        streamed(answering(&["{\"choice\": \"neg\"}"], "tool_use")),
    ])
    .await;
    let tap = Seen::default();
    let done = run(&profile_at(&server.uri(), true), &tap).await.expect("repaired");
    assert_eq!((done.output, done.usage.calls, done.usage.input_tokens), (json!("neg"), 2, 60));
    assert_eq!(
        tap.seen(),
        ["<begin>", "{\"choice\": ", "\"maybe\"}", "<end>", "<begin>", "{\"choice\": \"neg\"}", "<end>"]
    );
    let second: Value = server.received_requests().await.unwrap()[1].body_json().unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the question, the bad tool call, its error result");
    assert_eq!(
        messages[1]["content"][0]["toolUse"],
        json!({"toolUseId": "tooluse_1", "name": "classification", "input": {"choice": "maybe"}})
    );
    let result = &messages[2]["content"][0]["toolResult"];
    assert_eq!((result["toolUseId"].as_str(), result["status"].as_str()), (Some("tooluse_1"), Some("error")));
}

#[tokio::test]
async fn errors_in_the_stream_and_before_it_map_to_the_converse_call_s_classes() {
    const WORDS: &str = "the prompt's own words";
    let broken = |exception: &'static str| {
        let mut frames = opening(&["{\"choice\": "]);
        frames.push(frame("exception", exception, json!({"message": WORDS, "originalStatusCode": 500})));
        streamed(frames)
    };
    let cut_short = streamed(opening(&["{\"choice\": \"pos\"}"]));
    let cases: Vec<(ResponseTemplate, bool, &str)> = vec![
        (broken("throttlingException"), true, "RateLimited"),
        (broken("modelStreamErrorException"), true, "Server { status: 424"),
        (broken("internalServerException"), true, "Server { status: 500"),
        (broken("serviceUnavailableException"), true, "Server { status: 503"),
        (broken("validationException"), false, "Rejected { status: 400"),
        (cut_short, true, "Malformed"),
        (bedrock_client::error(429, "ThrottlingException"), true, "RateLimited"),
        (bedrock_client::error(400, "ValidationException"), false, "Rejected { status: 400"),
        (bedrock_client::error(403, "AccessDeniedException"), false, "Auth"),
        (streamed(answering(&["{}"], "max_tokens")), false, "Truncated"),
        (streamed(answering(&["{}"], "guardrail_intervened")), false, "Refused"),
    ];
    for (reply, retryable, class) in cases {
        let server = serve(vec![reply]).await;
        let error = run(&profile_at(&server.uri(), true), &NoTap).await.unwrap_err();
        let shown = format!("{error:?}");
        assert!(shown.starts_with(class), "{class}: {shown}");
        assert_eq!(error.is_retryable(), retryable, "{shown}");
        assert!(!shown.contains(WORDS) && !shown.contains(SECRET), "{shown}");
        assert_eq!(server.received_requests().await.unwrap().len(), 1, "no retry inside the client: {shown}");
    }
}

#[tokio::test]
async fn a_stream_past_the_response_bound_is_malformed_before_its_frame_is_whole() {
    // One piece of 17 MB: over the 16 MB a response may be, in a single frame.
    let mut frames = opening(&["{\"choice\": "]);
    frames.push(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": "x".repeat(17 * 1024 * 1024)}}}),
    ));
    let server = serve(vec![streamed(frames)]).await;
    let tap = Seen::default();
    let error = run(&profile_at(&server.uri(), true), &tap).await.unwrap_err();
    assert!(matches!(&error, ProviderError::Malformed(m) if m.contains("over 16777216 bytes")), "{error:?}");
    assert!(error.is_retryable());
    assert_eq!(tap.seen(), ["<begin>", "{\"choice\": ", "<end>"], "the text before it was told");
}

#[tokio::test]
async fn a_stream_that_stalls_midway_is_a_timeout_after_the_text_it_sent() {
    // A server that sends the answer's first events, then nothing, holding the connection open.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 64 * 1024];
        let _ = socket.read(&mut request).await.unwrap();
        let body = opening(&["{\"choice\": "]).concat();
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\ntransfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(format!("{:x}\r\n", body.len()).as_bytes()).await.unwrap();
        socket.write_all(&body).await.unwrap();
        socket.write_all(b"\r\n").await.unwrap();
        socket.flush().await.unwrap();
        std::future::pending::<()>().await;
        drop(socket);
    });
    let mut profile = profile_at(&uri, true);
    profile.timeout = Some(Duration::from_millis(500));
    let tap = Seen::default();
    let error = run(&profile, &tap).await.unwrap_err();
    assert_eq!(error, ProviderError::Timeout(Duration::from_millis(500)));
    assert!(error.is_retryable());
    assert_eq!(tap.seen(), ["<begin>", "{\"choice\": ", "<end>"]);
    server.abort();
}

/// A model that opens the answer tool twice: the answer is the first block's input, and the
/// live text (what the tap is told) must be that block's input alone, not both blocks' mixed.
#[tokio::test]
async fn a_stream_with_two_answer_blocks_tells_the_tap_only_the_answers_text() {
    let start = |index: i32, id: &str| {
        event(
            "contentBlockStart",
            json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": "classification"}}}),
        )
    };
    let delta = |index: i32, piece: &str| {
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}),
        )
    };
    let frames = vec![
        event("messageStart", json!({"role": "assistant"})),
        start(0, "tooluse_1"),
        start(1, "tooluse_2"),
        delta(0, "{\"choice\": "),
        delta(1, "{\"choice\": \"neg\"}"),
        delta(0, "\"pos\"}"),
        event("messageStop", json!({"stopReason": "tool_use"})),
        event("metadata", json!({"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}})),
    ];
    let server = serve(vec![streamed(frames)]).await;
    let tap = Seen::default();
    let done = run(&profile_at(&server.uri(), true), &tap).await.expect("success");
    assert_eq!(done.output, json!("pos"));
    assert_eq!(tap.seen(), ["<begin>", "{\"choice\": ", "\"pos\"}", "<end>"]);
}
