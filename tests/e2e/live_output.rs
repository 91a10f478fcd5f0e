//! Live output (docs/api.md, "Live output") through the dev server: a task's answer read while
//! the stub provider streams it, resumable from any offset, a retry as a new segment, another
//! tenant's task a 404, a stall treated as a stall.

use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-live";

/// Flushes every 50 ms, so a stream of a few hundred milliseconds is written in several chunks.
const STREAMING: &[(&str, &str)] = &[("AITASK_STREAM_FLUSH_MS", "50"), ("AITASK_READ_RATE", "100000")];

fn task(effect_key: &str, request: Value) -> Value {
    json!({"owner": {"scopeId": "live"}, "stepKey": "step", "effectKey": effect_key,
           "modelId": "default", "request": request})
}

fn text_task(effect_key: &str) -> Value {
    task(effect_key, json!({"kind": "generate_text", "prompt": "Write.", "maxOutputChars": 400}))
}

async fn create(api: &Api, body: &Value) -> String {
    let (status, created) = api.post("/v1/tasks", body).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

/// What a reader following the task saw: each read's answer, until the task ended and its last
/// segment was read to the end.
async fn follow(api: &Api, task_id: &str) -> Vec<Value> {
    let mut reads = Vec::new();
    let (mut segment, mut after): (Option<i64>, i64) = (None, 0);
    for _ in 0..2_000 {
        let mut path = format!("/v1/tasks/{task_id}/output?after={after}&wait=5");
        if let Some(segment) = segment {
            path.push_str(&format!("&segment={segment}"));
        }
        let (status, read) = api.get(&path).await;
        assert_eq!(status, 200, "{read}");
        segment = read["segment"].as_i64();
        after = read["next"].as_i64().unwrap();
        let done = read["ended"] == true && read["text"] == "";
        reads.push(read);
        if done {
            return reads;
        }
    }
    panic!("the reader never saw the end: {:?}", reads.last());
}

/// The text of the last segment the reads built, the way a reader builds it.
fn built(reads: &[Value]) -> (Option<i64>, String) {
    let mut segment = None;
    let mut text = String::new();
    for read in reads {
        if read["segment"].as_i64() != segment {
            segment = read["segment"].as_i64();
            text.clear();
        }
        assert_eq!(read["from"].as_i64().unwrap(), text.chars().count() as i64, "no gap, no repeat: {read}");
        text.push_str(read["text"].as_str().unwrap());
    }
    (segment, text)
}

#[tokio::test]
async fn the_streamed_text_is_the_answer_the_output_comes_from_for_each_kind() {
    let stack = Stack::start_with(STREAMING).await;
    let api = stack.api(APP);
    let kinds = [
        (json!({"kind": "generate_text", "prompt": "Write.", "maxOutputChars": 400}), "/text"),
        (
            json!({"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}),
            "/choice",
        ),
        (
            json!({"kind": "classify_many", "prompt": "Topics?", "input": "x", "choices": ["a", "b", "c"]}),
            "/choices",
        ),
        (
            json!({"kind": "extract_data", "prompt": "Extract", "input": "Ship Friday", "fields": [
                {"name": "due", "type": "date_time", "description": "", "required": true},
                {"name": "tone", "type": "choice", "description": "", "required": true, "choices": ["calm", "urgent"]}]}),
            "",
        ),
    ];
    for (i, (request, place)) in kinds.into_iter().enumerate() {
        let inner = if i == 0 { Reply::Filled { fill: 'é', chars: 300 } } else { Reply::Auto };
        stack.stub.script([Reply::Streamed {
            inner: Box::new(inner),
            piece_chars: 4,
            every: Duration::from_millis(25),
        }]);
        let id = create(&api, &task(&format!("kind-{i}"), request)).await;
        let reads = follow(&api, &id).await;
        assert!(
            reads.iter().any(|r| r["ended"] == false && r["text"] != ""),
            "text was read while the task ran: {reads:?}"
        );
        let (segment, text) = built(&reads);
        assert_eq!(segment, Some(1), "one call, one segment");
        assert!(reads.iter().any(|r| r["final"] == true), "the segment ended final");
        let ended = api.wait_terminal(&id).await;
        assert_eq!(ended["status"], "succeeded", "{ended}");
        let answer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        assert_eq!(answer.pointer(place), Some(&ended["output"]), "kind {i}: {text}");
        assert_eq!(reads.last().unwrap()["attempt"], 1);
    }
}

#[tokio::test]
async fn a_reader_resuming_at_every_offset_of_a_finished_stream_gets_the_exact_rest() {
    let stack = Stack::start_with(STREAMING).await;
    let api = stack.api(APP);
    // Characters of one, two, three and four bytes: offsets count characters.
    stack.stub.script([Reply::Streamed {
        inner: Box::new(Reply::Answer(json!({"text": "añ€😀 ".repeat(40)}))),
        piece_chars: 7,
        every: Duration::from_millis(20),
    }]);
    let id = create(&api, &text_task("every-offset")).await;
    let (segment, whole) = built(&follow(&api, &id).await);
    let segment = segment.expect("a segment");
    let characters: Vec<char> = whole.chars().collect();
    for after in 0..=characters.len() {
        let (status, read) = api.get(&format!("/v1/tasks/{id}/output?segment={segment}&after={after}")).await;
        assert_eq!(status, 200, "{read}");
        let rest: String = characters[after..].iter().collect();
        assert_eq!((read["from"].as_u64(), read["text"].as_str()), (Some(after as u64), Some(rest.as_str())));
        assert_eq!(read["next"].as_u64(), Some(characters.len() as u64));
        assert_eq!((read["final"].as_bool(), read["ended"].as_bool()), (Some(true), Some(true)));
    }
    // Past the end: from the end, nothing.
    let (_, read) = api.get(&format!("/v1/tasks/{id}/output?segment={segment}&after=100000")).await;
    assert_eq!((read["from"].as_u64(), read["text"].as_str()), (Some(characters.len() as u64), Some("")));
    // Another segment than the current one: the current one from 0.
    let (_, read) = api.get(&format!("/v1/tasks/{id}/output?segment={}&after=5", segment + 7)).await;
    assert_eq!((read["from"].as_u64(), read["text"].as_str()), (Some(0), Some(whole.as_str())));
}

#[tokio::test]
async fn a_retried_attempt_streams_a_new_segment_and_the_reader_starts_over() {
    let stack = Stack::start_with(STREAMING).await;
    let api = stack.api(APP);
    // The first attempt streams some text, then the provider fails midway (retryable).
    let first: Vec<(Duration, Vec<u8>)> = (0..8)
        .map(|i| {
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": format!("{{\"te{i}")}}]});
            (Duration::from_millis(30), format!("data: {chunk}\n\n").into_bytes())
        })
        .chain([(
            Duration::ZERO,
            b"data: {\"error\": {\"type\": \"server_error\", \"message\": \"boom\"}}\n\n".to_vec(),
        )])
        .collect();
    stack.stub.script([
        Reply::RawStream(first),
        Reply::Streamed { inner: Box::new(Reply::Auto), piece_chars: 2, every: Duration::from_millis(30) },
    ]);
    let id = create(&api, &text_task("retried")).await;
    let reads = follow(&api, &id).await;
    let segments: Vec<(i64, i64)> =
        reads.iter().filter_map(|r| Some((r["segment"].as_i64()?, r["attempt"].as_i64()?))).collect();
    assert!(segments.contains(&(1, 1)), "the first attempt's text was read: {reads:?}");
    let (segment, text) = built(&reads);
    assert_eq!(segment, Some(2), "the retry is a segment of its own");
    assert_eq!(reads.last().unwrap()["attempt"], 2);
    let ended = api.wait_terminal(&id).await;
    assert_eq!((ended["status"].as_str(), ended["attempts"].as_i64()), (Some("succeeded"), Some(2)));
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["text"], ended["output"], "no text of the first attempt mixed in: {text}");
    // A reader still on segment 1 is given segment 2 from its start.
    let (_, read) = api.get(&format!("/v1/tasks/{id}/output?segment=1&after=3")).await;
    assert_eq!((read["segment"].as_i64(), read["from"].as_i64()), (Some(2), Some(0)));
    assert_eq!(read["text"].as_str(), Some(text.as_str()));
}

#[tokio::test]
async fn another_tenants_task_and_bad_queries_are_refused_and_a_short_answer_writes_nothing() {
    let stack = Stack::start_with(STREAMING).await;
    let api = stack.api(APP);
    let id = create(&api, &text_task("short")).await;
    let ended = api.wait_terminal(&id).await;
    assert_eq!(ended["status"], "succeeded");
    let (status, read) = stack.api("app-other").get(&format!("/v1/tasks/{id}/output")).await;
    assert_eq!((status, read["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{read}");
    let (status, _) = api.get(&format!("/v1/tasks/{}/output", uuid::Uuid::now_v7())).await;
    assert_eq!(status, 404);
    for bad in ["after=-1", "after=x", "after=4000001", "segment=-2", "segment=1.5", "wait=soon"] {
        let (status, read) = api.get(&format!("/v1/tasks/{id}/output?{bad}")).await;
        assert_eq!((status, read["error"]["code"].as_str()), (400, Some("INVALID_REQUEST")), "{bad}: {read}");
    }
    // The stub answered at once, as one JSON body: no stream was written, and the read says so.
    let (status, read) = api.get(&format!("/v1/tasks/{id}/output?wait=1")).await;
    assert_eq!(status, 200);
    assert_eq!(
        read,
        json!({"taskId": id, "status": "succeeded", "ended": true, "segment": null,
        "attempt": null, "from": 0, "text": "", "next": 0, "final": false})
    );
    assert_eq!(stack.stub.requests()[0]["stream"], true, "the call asked for a stream");
}

#[tokio::test]
async fn a_stream_that_stalls_midway_ends_its_attempt_as_a_stalled_call_does() {
    let models =
        json!({"default": {"provider": "openai", "model": "stub-model", "timeoutMs": 1500}}).to_string();
    let stack = Stack::start_with(&[STREAMING, &[("AITASK_MODELS", models.as_str())]].concat()).await;
    let api = stack.api(APP);
    let stalls = vec![
        (
            Duration::ZERO,
            b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"{\\\"text\\\": \\\"st\"}}]}\n\n"
                .to_vec(),
        ),
        (Duration::from_secs(3_600), b"data: [DONE]\n\n".to_vec()),
    ];
    stack
        .stub
        .script([Reply::RawStream(stalls), Reply::Slow(Duration::from_secs(3_600), Box::new(Reply::Auto))]);
    let id = create(&api, &task("stalls", json!({"kind": "generate_text", "prompt": "Write."}))).await;
    let stalled = create(&api, &task("slow", json!({"kind": "generate_text", "prompt": "Write."}))).await;
    wait_for("both attempts given up", || async {
        let (_, a) = api.get(&format!("/v1/tasks/{id}/attempts")).await;
        let (_, b) = api.get(&format!("/v1/tasks/{stalled}/attempts")).await;
        let code = |attempts: &Value| attempts["attempts"][0]["errorCode"].as_str().map(str::to_owned);
        code(&a).zip(code(&b))
    })
    .await;
    let (_, a) = api.get(&format!("/v1/tasks/{id}/attempts")).await;
    let (_, b) = api.get(&format!("/v1/tasks/{stalled}/attempts")).await;
    let class = |attempts: &Value| {
        let attempt = &attempts["attempts"][0];
        (attempt["outcome"].clone(), attempt["errorCode"].clone())
    };
    assert_eq!(class(&a), class(&b), "a stream that stalls is a call that stalls: {a} {b}");
    // Each is retried, and succeeds.
    for id in [&id, &stalled] {
        let ended = api.wait_terminal(id).await;
        assert_eq!(
            (ended["status"].as_str(), ended["attempts"].as_i64()),
            (Some("succeeded"), Some(2)),
            "{ended}"
        );
    }
}
