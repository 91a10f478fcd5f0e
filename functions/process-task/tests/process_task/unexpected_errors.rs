//! An unexpected error in one record (a panic, a stored request that no longer parses) ends that
//! task's attempt as WORKFLOW_AI_RUNTIME_ERROR, retryable as the reference has it, and the rest
//! of the batch is processed as usual.

use std::time::Duration;

use crate::common::*;
use aitasks_store::Task;
use aitasks_testkit::*;

async fn state(db: &TestDb, task: &Task) -> (String, Option<String>, Option<String>) {
    let row = db
        .client()
        .await
        .query_one("SELECT status, error_code, error_message FROM tasks WHERE id = $1", &[&task.id])
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

#[tokio::test]
async fn a_panic_or_an_unreadable_request_ends_only_its_own_task() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[("AITASK_MAX_ATTEMPTS", "3")]).await;
    let good = task(&db, "good", "Sentiment?", 3).await;
    let panics = task(&db, "panics", "panic", 3).await;
    let unreadable = task(&db, "unreadable", "Sentiment?", 3).await;
    // A stored request that no longer parses (written by an older version, or by hand).
    db.sql(&format!("UPDATE tasks SET request = request - 'choices' WHERE id = '{}'", unreadable.id)).await;

    let response = process_task::handle(&app, event(&[&good, &panics, &unreadable], Duration::from_secs(60)))
        .await
        .unwrap();
    let mut retried: Vec<String> =
        response.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect();
    retried.sort();
    assert_eq!(retried, ["m-panics", "m-unreadable"], "only the two broken records come back");

    assert_eq!(state(&db, &good).await.0, "succeeded", "the rest of the batch ran");
    for broken in [&panics, &unreadable] {
        let (status, code, message) = state(&db, broken).await;
        assert_eq!(status, "queued", "retryable: requeued for its next attempt");
        assert_eq!(code.as_deref(), Some("WORKFLOW_AI_RUNTIME_ERROR"));
        let message = message.unwrap_or_default();
        assert!(!message.contains("a bug in one record") && !message.contains("choices"), "{message}");
    }
    assert_eq!(stub.calls(), 1, "only the good record reached the provider");
}

#[tokio::test]
async fn on_the_last_attempt_it_fails_the_task_with_an_event() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[("AITASK_MAX_ATTEMPTS", "1")]).await;
    let panics = task(&db, "panics", "panic", 1).await;

    let response = process_task::handle(&app, event(&[&panics], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "settled: nothing to deliver again");
    let (status, code, _) = state(&db, &panics).await;
    assert_eq!((status.as_str(), code.as_deref()), ("failed", Some("WORKFLOW_AI_RUNTIME_ERROR")));
    let events = queues.drain(&queues.events, Duration::from_secs(2)).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].contains("WORKFLOW_AI_RUNTIME_ERROR"), "{}", events[0]);
}
