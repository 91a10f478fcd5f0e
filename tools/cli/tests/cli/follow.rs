//! Live output through the client library (`follow_output`) and `aitasks wait --follow`,
//! against the dev server with the stub provider streaming as OpenAI does: the text followed is
//! what the stub streamed, a reconnect from an offset continues exactly, a retried attempt is a
//! new segment (restarted), and the command prints the text, then ends as `wait` does.

use std::time::Duration;

use aitasks_client::{Client, FollowOptions, OutputPiece, TaskBody, TaskStatus};
use aitasks_testkit::{dev_token, Reply, Stack};
use futures::StreamExt;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::aitasks;

const APP: &str = "app-cli-follow";

/// Flushes every 50 ms, so a stream of a second is written in many pieces; reads unthrottled.
const STREAMING: &[(&str, &str)] = &[("AITASK_STREAM_FLUSH_MS", "50"), ("AITASK_READ_RATE", "100000")];

/// The answer the stub streams: characters of one to four bytes (offsets count characters).
fn answer() -> Value {
    json!({"text": "añ€😀 ".repeat(30)})
}

/// The stub streams `answer`, 5 characters every 20 ms (about 0.8 s).
fn streamed(answer: Value) -> Reply {
    Reply::Streamed {
        inner: Box::new(Reply::Answer(answer)),
        piece_chars: 5,
        every: Duration::from_millis(20),
    }
}

/// A first attempt that streams some text and then fails midway (a retryable provider error).
fn failing_midway() -> Reply {
    let pieces = (0..8)
        .map(|i| {
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": format!("{{\"te{i}")}}]});
            (Duration::from_millis(30), format!("data: {chunk}\n\n").into_bytes())
        })
        .chain([(
            Duration::ZERO,
            b"data: {\"error\": {\"type\": \"server_error\", \"message\": \"boom\"}}\n\n".to_vec(),
        )])
        .collect();
    Reply::RawStream(pieces)
}

fn body(effect_key: &str) -> TaskBody {
    TaskBody::checked(json!({
        "owner": {"scopeId": "live"}, "stepKey": "write", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "generate_text", "prompt": "Write.", "maxOutputChars": 1000}
    }))
    .unwrap()
}

fn client(stack: &Stack) -> Client {
    Client::new(format!("http://{}", stack.server.address), dev_token(APP)).unwrap()
}

async fn pieces(client: &Client, id: Uuid, options: FollowOptions) -> Vec<OutputPiece> {
    client.output_stream(id, options).map(|piece| piece.unwrap()).collect().await
}

/// The text a reader holds after these pieces: a restart drops what came before.
fn held(pieces: &[OutputPiece]) -> String {
    pieces.iter().fold(
        String::new(),
        |text, piece| {
            if piece.restarted {
                piece.text.clone()
            } else {
                text + &piece.text
            }
        },
    )
}

#[tokio::test]
async fn a_followed_task_reads_what_the_stub_streamed_and_a_reconnect_continues_exactly() {
    let stack = Stack::start_with(STREAMING).await;
    let client = client(&stack);
    stack.stub.script([streamed(answer())]);
    let id = client.create(&body("followed")).await.unwrap().task.id;

    // A reader takes the first piece, then drops the connection and comes back from its place.
    let mut follower = client.follow_output(id);
    let first = follower.next().await.unwrap().unwrap();
    drop(follower);
    let options =
        FollowOptions { segment: Some(first.segment), after: first.next, ..FollowOptions::default() };
    let rest = pieces(&client, id, options).await;
    let whole = answer().to_string();
    assert_eq!(first.text.clone() + &held(&rest), whole, "no gap, no repeat after the reconnect");
    assert!(rest.iter().all(|p| !p.restarted && p.segment == first.segment && p.attempt == 1));

    let task = client.wait(id, Duration::from_secs(60)).await.unwrap();
    assert_eq!(task.status, TaskStatus::Succeeded);
    assert_eq!(Some(&answer()["text"]), task.output.as_ref(), "the streamed answer is the output's");

    // After the end: a reader from the start gets it whole, and from any offset exactly the rest.
    let again = pieces(&client, id, FollowOptions::default()).await;
    assert_eq!(held(&again), whole);
    let characters: Vec<char> = whole.chars().collect();
    assert_eq!(again.last().map(|p| p.next), Some(characters.len() as i64), "offsets count characters");
    for after in [0, 1, 2, 3, 4, 77, characters.len() - 1, characters.len()] {
        let options =
            FollowOptions { segment: Some(first.segment), after: after as i64, ..FollowOptions::default() };
        let tail = pieces(&client, id, options).await;
        assert_eq!(held(&tail), characters[after..].iter().collect::<String>(), "from {after}");
    }
}

#[tokio::test]
async fn a_retried_attempt_is_a_new_segment_the_follower_says_restarted() {
    let stack = Stack::start_with(STREAMING).await;
    let client = client(&stack);
    stack.stub.script([failing_midway(), streamed(answer())]);
    let id = client.create(&body("retried")).await.unwrap().task.id;
    let read = pieces(&client, id, FollowOptions::default()).await;
    let restart = read.iter().position(|p| p.restarted).unwrap_or_else(|| panic!("no restart: {read:?}"));
    assert!(restart > 0, "the first attempt's text was read first: {read:?}");
    assert!(read[..restart].iter().all(|p| p.attempt == 1 && p.segment == 1));
    assert!(read[restart..].iter().all(|p| p.attempt == 2 && p.segment == 2));
    assert_eq!(held(&read), answer().to_string(), "only the retry's text is held");
    let task = client.wait(id, Duration::from_secs(60)).await.unwrap();
    assert_eq!((task.status, task.attempts), (TaskStatus::Succeeded, 2));
}

#[tokio::test]
async fn wait_follow_prints_the_text_as_it_comes_then_ends_as_wait_does() {
    let stack = Stack::start_with(STREAMING).await;
    let token = dev_token(APP);
    let client = client(&stack);

    // A retried attempt: the first attempt's text, a marker, the retry's text, then the task.
    stack.stub.script([failing_midway(), streamed(answer())]);
    let id = client.create(&body("cli-retried")).await.unwrap().task.id.to_string();
    let run = aitasks(&stack, &token, &["wait", &id, "--follow", "--timeout", "60"]).await.ok();
    let (text, task) = run.stdout.split_once("\nid:").unwrap_or_else(|| panic!("{}", run.stdout));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "the first attempt's line, then the retry's: {text:?}");
    assert!(lines[0].starts_with("{\"te0"), "{text:?}");
    assert_eq!(lines[1], answer().to_string());
    assert!(run.stderr.contains("--- attempt 2 (segment 2): the answer starts over ---"), "{}", run.stderr);
    assert!(task.contains("status:      succeeded"), "the task as wait prints it: {task}");
    let waited = aitasks(&stack, &token, &["wait", &id]).await.ok();
    assert_eq!(format!("id:{task}"), waited.stdout, "the end is wait's own");

    // --json: a JSON line per piece, then the task.
    stack.stub.script([streamed(answer())]);
    let id = client.create(&body("cli-json")).await.unwrap().task.id.to_string();
    let lines = aitasks(&stack, &token, &["wait", &id, "--follow", "--timeout", "60", "--json"])
        .await
        .ok()
        .json_lines();
    let (task, pieces) = lines.split_last().unwrap();
    assert_eq!((task["id"].as_str(), task["status"].as_str()), (Some(id.as_str()), Some("succeeded")));
    let text: String = pieces.iter().map(|p| p["text"].as_str().unwrap()).collect();
    assert_eq!(text, answer().to_string());
    assert!(pieces.iter().all(|p| p["segment"] == 1 && p["attempt"] == 1 && p["restarted"] == false));

    // A task that failed: the same exit status as wait (1), its code on standard error.
    stack.stub.script([Reply::status(400)]);
    let id = client.create(&body("cli-failed")).await.unwrap().task.id.to_string();
    let followed = aitasks(&stack, &token, &["wait", &id, "--follow", "--timeout", "60"]).await;
    let waited = aitasks(&stack, &token, &["wait", &id]).await;
    assert_eq!((followed.code, waited.code), (1, 1), "{}", followed.stderr);
    assert!(followed.stderr.contains("failed:"), "{}", followed.stderr);
    assert_eq!(followed.stdout, waited.stdout);
}
