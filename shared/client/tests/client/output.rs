//! Following a task's live output against a scripted server: the reads it sends (its place, its
//! wait), what it hands out, the retries of a 429 and a 503, and where it stops.

use std::time::Duration;

use aitasks_client::{FollowOptions, OutputPiece, ReadOutput, TaskStatus};
use futures::StreamExt;
use serde_json::{json, Value};

use crate::stub::{Answer, Stub, TASK_ID};

fn id() -> uuid::Uuid {
    TASK_ID.parse().unwrap()
}

fn output(status: &str, segment: Option<i32>, from: i64, text: &str, is_final: bool) -> Value {
    let ended = ["succeeded", "failed", "canceled"].contains(&status);
    json!({"taskId": TASK_ID, "status": status, "ended": ended, "segment": segment,
           "attempt": segment.map(|s| s.min(2)), "from": from, "text": text,
           "next": from + text.chars().count() as i64, "final": is_final})
}

fn texts(pieces: &[OutputPiece]) -> Vec<(&str, i32, bool)> {
    pieces.iter().map(|p| (p.text.as_str(), p.segment, p.restarted)).collect()
}

#[tokio::test]
async fn one_read_sends_its_place_and_wait_and_reads_the_answer() {
    let stub = Stub::script(vec![Answer::json(200, output("running", Some(2), 7, "é!", false))]).await;
    let read = ReadOutput { segment: Some(2), after: 7, wait: Duration::from_millis(1500) };
    let answer = stub.client(1).output(id(), &read).await.unwrap();
    assert_eq!(
        (answer.status, answer.segment, answer.from, answer.next),
        (TaskStatus::Running, Some(2), 7, 9)
    );
    assert_eq!(answer.text, "é!");
    assert_eq!(stub.hits()[0].target, format!("/v1/tasks/{TASK_ID}/output?segment=2&after=7&wait=1.500"));
    stub.client(1).output(id(), &ReadOutput::default()).await.unwrap();
    assert_eq!(stub.hits()[1].target, format!("/v1/tasks/{TASK_ID}/output?after=0"), "no wait: none sent");
}

#[tokio::test]
async fn a_follower_resumes_from_each_answer_retries_429_and_503_and_tells_a_new_segment() {
    let stub = Stub::script(vec![
        Answer::json(200, output("running", Some(1), 0, "{\"text\": \"he", false)),
        Answer::error(503, "UNAVAILABLE"),
        Answer::json(200, output("running", Some(1), 12, "llo", false)),
        Answer::error(429, "WORKFLOW_AI_READ_RATE").header("retry-after", 1),
        // The attempt was lost: a retry writes segment 2 afresh.
        Answer::json(200, output("running", Some(2), 0, "{\"text\": \"hi\"}", true)),
        Answer::json(200, output("succeeded", Some(2), 14, "", true)),
    ])
    .await;
    let pieces: Vec<OutputPiece> =
        stub.client(5).output_stream(id(), FollowOptions::default()).map(|p| p.unwrap()).collect().await;
    assert_eq!(
        texts(&pieces),
        [("{\"text\": \"he", 1, false), ("llo", 1, false), ("{\"text\": \"hi\"}", 2, true)]
    );
    let targets: Vec<String> = stub.hits().into_iter().map(|h| h.target).collect();
    let base = format!("/v1/tasks/{TASK_ID}/output");
    assert_eq!(
        targets,
        [
            format!("{base}?after=0&wait=20"),
            format!("{base}?segment=1&after=12&wait=20"),
            format!("{base}?segment=1&after=12&wait=20"),
            format!("{base}?segment=1&after=15&wait=20"),
            format!("{base}?segment=1&after=15&wait=20"),
            format!("{base}?segment=2&after=14&wait=20"),
        ],
        "each read from the last answer's next, a retried one the same"
    );
}

#[tokio::test]
async fn a_task_without_a_stream_ends_the_follower_at_once_and_a_404_ends_it_with_the_error() {
    let stub = Stub::script(vec![Answer::json(200, output("succeeded", None, 0, "", false))]).await;
    let client = stub.client(3);
    let mut follower = client.follow_output(id());
    assert!(follower.next().await.is_none());
    assert_eq!(follower.last().map(|a| a.ended), Some(true));
    assert_eq!(stub.hits().len(), 1);

    let gone = Stub::script(vec![Answer::error(404, "NOT_FOUND")]).await;
    let client = gone.client(3);
    let mut follower = client.follow_output(id());
    let error = follower.next().await.unwrap().unwrap_err();
    assert_eq!((error.status(), error.code()), (Some(404), Some("NOT_FOUND")));
    assert!(follower.next().await.is_none(), "an error ends it");
    assert_eq!(gone.hits().len(), 1, "a 404 is not tried again");
}

#[tokio::test]
async fn a_reconnect_reads_from_its_place_and_a_cut_answer_is_read_on() {
    let stub = Stub::script(vec![
        // Ended, but the answer was cut at its size limit: the rest is read before the end.
        Answer::json(200, output("succeeded", Some(3), 40, "abc", false)),
        Answer::json(200, output("succeeded", Some(3), 43, "d", true)),
    ])
    .await;
    let options = FollowOptions { segment: Some(3), after: 40, wait: Duration::from_secs(2) };
    let pieces: Vec<OutputPiece> =
        stub.client(1).output_stream(id(), options).map(|p| p.unwrap()).collect().await;
    assert_eq!(texts(&pieces), [("abc", 3, false), ("d", 3, false)]);
    assert_eq!(pieces[1].next, 44);
    assert_eq!(stub.hits()[0].target, format!("/v1/tasks/{TASK_ID}/output?segment=3&after=40&wait=2"));
}
