//! Hostile streams (docs/api.md, "Live output"): what a provider streams is input. A chunk over
//! the output limit, a line that is not UTF-8 and an event line of 10 MB each end their task
//! once, with the error a malformed answer has, while a task streaming beside it succeeds; a
//! character cut between two writes is put back together.

use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-live-hostile";

fn task(effect_key: &str, prompt: &str) -> Value {
    json!({"owner": {"scopeId": "hostile"}, "stepKey": "step", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "generate_text", "prompt": prompt, "maxOutputChars": 400}})
}

fn event(content: &str) -> Vec<u8> {
    let chunk = json!({"choices": [{"index": 0, "delta": {"content": content}}]});
    format!("data: {chunk}\n\n").into_bytes()
}

/// A stream that starts well (a little text, for longer than a flush interval), then turns
/// hostile with `then`, written in pieces of at most 1 MiB 20 ms apart.
fn turns_hostile(then: Vec<u8>) -> Reply {
    let mut pieces = vec![(Duration::ZERO, event("{\"te")), (Duration::from_millis(120), event("xt\": \"a"))];
    for piece in then.chunks(1 << 20) {
        pieces.push((Duration::from_millis(20), piece.to_vec()));
    }
    pieces.push((Duration::ZERO, b"data: [DONE]\n\n".to_vec()));
    Reply::RawStream(pieces)
}

async fn create(api: &Api, body: &Value) -> String {
    let (status, created) = api.post("/v1/tasks", body).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

/// Each hostile stream, with the error code its task ends with.
fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let huge = "a".repeat(5_000_000);
    let mut not_utf8 = b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"".to_vec();
    not_utf8.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    not_utf8.extend_from_slice(b"\"}}]}\n\n");
    let mut long_line = b"data: ".to_vec();
    long_line.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    long_line.extend_from_slice(b"\n\n");
    vec![
        // Not JSON and over the output limit: every turn fails the checks.
        ("huge-chunk", event(&huge), "WORKFLOW_AI_LOOP_FAILED"),
        ("not-utf8", not_utf8, "WORKFLOW_AI_PROVIDER_ERROR"),
        ("long-line", long_line, "WORKFLOW_AI_PROVIDER_ERROR"),
    ]
}

#[tokio::test]
async fn a_hostile_stream_ends_its_task_once_and_its_neighbour_succeeds() {
    let mut replies = Reply::Streamed { inner: Box::new(Reply::Auto), piece_chars: 3, every: Duration::from_millis(20) };
    for (name, hostile, _) in cases() {
        replies = Reply::Matching { needle: format!("HOSTILE-{name}"), then: Box::new(turns_hostile(hostile)), otherwise: Box::new(replies) };
    }
    let stack = Stack::start_with(&[
        ("AITASK_STREAM_FLUSH_MS", "50"),
        ("AITASK_MAX_ATTEMPTS", "1"),
        ("AITASK_READ_RATE", "100000"),
    ])
    .await;
    stack.stub.set_default(replies);
    let api = stack.api(APP);
    for (name, _, code) in cases() {
        let hostile = create(&api, &task(&format!("{name}-h"), &format!("Write. HOSTILE-{name}"))).await;
        let neighbour = create(&api, &task(&format!("{name}-n"), "Write, kindly.")).await;
        // A reader of the hostile task is answered throughout, with at most the output limit.
        let segment_chars = std::sync::atomic::AtomicU64::new(0);
        let ended = wait_for(&format!("{name}: the hostile task ends"), || async {
            let (status, read) = api.get(&format!("/v1/tasks/{hostile}/output?wait=1")).await;
            assert_eq!(status, 200, "{name}: {read}");
            segment_chars.fetch_max(read["next"].as_u64().unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
            (read["ended"] == true).then_some(read)
        })
        .await;
        let segment_chars = segment_chars.into_inner();
        assert!(segment_chars <= 4_000_000, "{name}: a segment past the output limit ({segment_chars})");
        let task = api.wait_terminal(&hostile).await;
        assert_eq!(
            (task["status"].as_str(), task["errorCode"].as_str(), task["attempts"].as_i64()),
            (Some("failed"), Some(code), Some(1)),
            "{name}: {task} {ended}"
        );
        let (_, attempts) = api.get(&format!("/v1/tasks/{hostile}/attempts")).await;
        assert_eq!(attempts["attempts"].as_array().map(Vec::len), Some(1), "{name}: ended once: {attempts}");
        let beside = api.wait_terminal(&neighbour).await;
        assert_eq!((beside["status"].as_str(), beside["attempts"].as_i64()), (Some("succeeded"), Some(1)), "{name}: {beside}");
    }
}

#[tokio::test]
async fn a_character_cut_between_two_writes_is_read_whole() {
    let stack = Stack::start_with(&[("AITASK_STREAM_FLUSH_MS", "50"), ("AITASK_READ_RATE", "100000")]).await;
    let api = stack.api(APP);
    let text = "é😀€ and more: ß水😀";
    let mut body = event("{\"text\": \"");
    body.extend(event(text));
    body.extend(event("\"}"));
    body.extend_from_slice(b"data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n");
    // Cut into 3-byte writes: every multibyte character is split across two, 10 ms apart.
    let pieces = body.chunks(3).map(|piece| (Duration::from_millis(10), piece.to_vec())).collect();
    stack.stub.script([Reply::RawStream(pieces)]);
    let id = create(&api, &task("cut", "Write.")).await;
    let ended = api.wait_terminal(&id).await;
    assert_eq!((ended["status"].as_str(), ended["output"].as_str()), (Some("succeeded"), Some(text)), "{ended}");
    let (_, read) = api.get(&format!("/v1/tasks/{id}/output")).await;
    let streamed: Value = serde_json::from_str(read["text"].as_str().unwrap()).unwrap();
    assert_eq!((streamed["text"].as_str(), read["final"].as_bool()), (Some(text), Some(true)), "{read}");
}
