//! The sweeper's side of lost messages: when the task queue holds fewer messages than the store
//! owes (sent over a minute ago, not claimed), it sends them again on its next run instead of
//! after `AITASK_RESEND_AFTER_MS`, each in its application's group; when the queue holds them, it
//! sends nothing.

use std::time::Duration;

use aitasks_testkit::*;
use lambda_runtime::{Context, LambdaEvent};

#[tokio::test]
async fn a_queue_that_lost_messages_gets_them_again_from_the_next_sweep() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(&db, &queues, &stub, &[]);
    let client = db.client().await;
    let mut ids = Vec::new();
    for i in 0..12 {
        let created =
            aitasks_store::create_task(&client, &new_task(APP, app_owner("s"), &format!("k{i}"))).await;
        ids.push(created.unwrap().task().id);
    }
    // Sent two minutes ago (as far as the store knows; the plain re-send waits five), and the queue holds only three of them.
    db.sql("UPDATE tasks SET message_sent_at = now() - interval '2 minutes'").await;
    for id in &ids[..3] {
        queues.send(&queues.tasks, &format!("{{\"taskId\":\"{id}\"}}")).await;
    }
    let sweep = || sweeper::handle(&app, LambdaEvent::new(serde_json::json!({}), Context::default()));

    let summary = sweep().await.unwrap();
    assert_eq!(summary.messages_restored, 12, "every owed message, the three the queue kept too");
    assert_eq!(summary.restored_possible_duplicates, 3, "those three may now be twice in the queue");
    let mut received = queues.drain(&queues.tasks, Duration::from_secs(2)).await;
    received.sort();
    received.dedup();
    assert_eq!(received.len(), 12, "one message (at least) for every queued task");

    // Now the queue holds what the store owes (and more): nothing is sent again.
    for id in &ids {
        queues.send(&queues.tasks, &format!("{{\"taskId\":\"{id}\"}}")).await;
    }
    db.sql("UPDATE tasks SET message_sent_at = now() - interval '2 minutes'").await;
    let again = sweep().await.unwrap();
    assert_eq!((again.messages_restored, again.messages_sent), (0, 0));
}
