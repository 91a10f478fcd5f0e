//! A worker's completion hands its event over to the worker's own publish (migrations/V41): no
//! statement after a publish that went out, the sweeper's when it did not, and the task's SQS
//! message behind it when the worker died between the commit and the publish.

use std::time::Duration;

use aitasks_store::Claim;
use aitasks_testkit::*;
use serde_json::json;

use crate::common::*;

/// `(delivered, handed_over)` of each of a task's events.
async fn events_of(db: &TestDb, task_id: uuid::Uuid) -> Vec<(bool, bool)> {
    let client = db.client().await;
    let rows = client
        .query(
            "SELECT delivered_at IS NOT NULL, handed_over FROM task_events WHERE task_id = $1",
            &[&task_id],
        )
        .await
        .unwrap();
    rows.iter().map(|row| (row.get(0), row.get(1))).collect()
}

fn announcing(bodies: &[String], task_id: uuid::Uuid) -> usize {
    bodies.iter().filter(|body| body.contains(&task_id.to_string())).count()
}

#[tokio::test]
async fn a_success_costs_no_statement_after_its_publish() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let warm = task(&db, "warm", "Sentiment?", 3).await;
    process_task::handle(&app, event(&[&warm], Duration::from_secs(60))).await.unwrap();

    let task = task(&db, "t", "Sentiment?", 3).await;
    db.reset_statements().await;
    let response = process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let (marks, _) = db.statement_calls("UPDATE task_events SET delivered_at").await;
    assert_eq!(marks, 0, "the event was written delivered: no mark");
    assert_eq!(db.statements_seen().await, 2, "the claim and the completion");
    assert_eq!(events_of(&db, task.id).await, [(true, true)]);
    let bodies = queues.drain(&queues.events, Duration::from_secs(2)).await;
    assert_eq!(announcing(&bodies, task.id), 1, "published once: {bodies:?}");
}

#[tokio::test]
async fn a_publish_that_fails_hands_the_event_to_the_sweeper() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let gone = format!("{}/000000000000/no-such-queue", queues.endpoint);
    let app = app(&db, &queues, &stub, &[("AITASK_EVENTS_QUEUE_URL", &gone)]).await;
    let task = task(&db, "t", "Sentiment?", 3).await;
    let response = process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "the task is done: {:?}", response.batch_item_failures);
    assert_eq!(events_of(&db, task.id).await, [(false, false)], "the outbox's again, undelivered");
    let client = db.client().await;
    let due = aitasks_store::take_undelivered_events(&client, Duration::from_secs(60), 10).await.unwrap();
    assert_eq!(due.iter().map(|e| e.task_id).collect::<Vec<_>>(), [task.id], "due to the sweeper at once");
}

#[tokio::test]
async fn a_worker_that_died_before_its_publish_is_covered_by_the_message_that_comes_back() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let task = task(&db, "t", "Sentiment?", 3).await;
    // The worker that died: its completion committed, handing the event over, and nothing after.
    let client = db.client().await;
    let Claim::Claimed(running) = claim_one(&client, task.id).await else { panic!("claimed") };
    let written =
        aitasks_store::complete_attempt(&client, running.lease(), &json!("pos"), None, true).await.unwrap();
    assert!(matches!(written, aitasks_store::Fenced::Written(_)));
    assert_eq!(events_of(&db, task.id).await, [(true, true)]);
    assert!(queues.drain(&queues.events, Duration::from_secs(1)).await.is_empty(), "never published");

    // Its message comes back (it was never answered): the event goes out, and is the outbox's.
    let response = process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let bodies = queues.drain(&queues.events, Duration::from_secs(2)).await;
    assert_eq!(
        announcing(&bodies, task.id),
        1,
        "published by the worker the message came back to: {bodies:?}"
    );
    assert_eq!(events_of(&db, task.id).await, [(true, false)], "marked delivered by that publish");
    assert_eq!(stub.completed(), 0, "the provider is not called again");

    // A later duplicate of the message publishes nothing more.
    process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    assert!(queues.drain(&queues.events, Duration::from_secs(1)).await.is_empty());
}

#[tokio::test]
async fn a_message_received_before_keeps_the_outbox() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let task = task(&db, "t", "Sentiment?", 3).await;
    let mut again = event(&[&task], Duration::from_secs(60));
    again.payload.records[0].attributes.insert("ApproximateReceiveCount".into(), "2".into());
    let response = process_task::handle(&app, again).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    assert_eq!(events_of(&db, task.id).await, [(true, false)], "the outbox's, marked after its publish");
}

#[tokio::test]
async fn one_retried_message_keeps_the_outbox_for_its_whole_group() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let (fresh, retried) =
        (task(&db, "fresh", "Sentiment?", 3).await, task(&db, "retried", "Sentiment?", 3).await);
    let mut records = event(&[&fresh, &retried], Duration::from_secs(60));
    records.payload.records[1].attributes.insert("ApproximateReceiveCount".into(), "3".into());
    let response = process_task::handle(&app, records).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    for task in [&fresh, &retried] {
        assert_eq!(events_of(&db, task.id).await, [(true, false)], "{}: the outbox's", task.effect_key);
    }
}

#[tokio::test]
async fn a_redelivery_while_another_worker_runs_the_task_is_kept_until_the_attempt_is_over() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let task = task(&db, "t", "Sentiment?", 3).await;
    let Claim::Claimed(_) = claim_one(&db.client().await, task.id).await else { panic!("claimed") };
    let mut again = event(&[&task], Duration::from_secs(60));
    again.payload.records[0].attributes.insert("ApproximateReceiveCount".into(), "2".into());
    let response = process_task::handle(&app, again).await.unwrap();
    assert_eq!(response.batch_item_failures.len(), 1, "kept: it may be all that stands behind the event");
    // A duplicate on its first receive is answered at once, as before (inside one invocation,
    // its twin answers for the message).
    let response = process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty());
}
