//! A claim never costs an attempt it did not use. The records of a batch are claimed a wave at a
//! time, as many as run at once, so no claimed task waits unwatched behind the others; a claim
//! never waits on a row another transaction holds (that task comes back in a fresh message a
//! moment later); and a
//! claim held up past the moment its worker stopped waiting (the database was slow) takes
//! nothing after it.

use std::time::Duration;

use aitasks_store::{Task, TaskStatus};
use aitasks_testkit::*;

use crate::common::*;

async fn state(db: &TestDb, task: &Task) -> (TaskStatus, i32) {
    let task = aitasks_store::get_task(&db.client().await, APP, task.id).await.unwrap().unwrap();
    (task.status, task.attempts)
}

#[tokio::test]
async fn a_claim_held_up_past_its_worker_s_patience_costs_no_attempt() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[("AITASK_DEADLINE_MARGIN_MS", "500")]).await;
    let first = task(&db, "first", "Sentiment?", 3).await;
    let second = task(&db, "second", "Sentiment?", 3).await;
    // The whole table locked: the claim statement waits (on the table, not on a row).
    let mut client = db.client().await;
    let holder = client.transaction().await.unwrap();
    holder.batch_execute("LOCK TABLE tasks IN EXCLUSIVE MODE").await.unwrap();
    // A 4 s invocation: the worker waits for its claim until 2 s before its answer is due.
    let response =
        process_task::handle(&app, event(&[&first, &second], Duration::from_secs(4))).await.unwrap();
    assert_eq!(response.batch_item_failures.len(), 2, "both records come back for another delivery");
    // Released after the worker answered: the claim goes on, too late to take anything.
    holder.rollback().await.unwrap();
    db.wait_until_not_running("claim_token").await;
    assert_eq!(state(&db, &first).await, (TaskStatus::Queued, 0), "nothing taken after the worker gave up");
    assert_eq!(state(&db, &second).await, (TaskStatus::Queued, 0));
    assert_eq!(stub.calls(), 0);
    // The next delivery works on both, each on its first attempt.
    let response =
        process_task::handle(&app, event(&[&first, &second], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty());
    assert_eq!(state(&db, &first).await, (TaskStatus::Succeeded, 1));
    assert_eq!(state(&db, &second).await, (TaskStatus::Succeeded, 1));
}

#[tokio::test]
async fn a_claim_skips_a_row_another_transaction_holds_and_its_record_comes_back() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let free = task(&db, "free", "Sentiment?", 3).await;
    let held = task(&db, "held", "Sentiment?", 3).await;
    let mut client = db.client().await;
    let holder = client.transaction().await.unwrap();
    holder.execute("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", &[&held.id]).await.unwrap();
    let response = process_task::handle(&app, event(&[&free, &held], Duration::from_secs(60))).await.unwrap();
    holder.rollback().await.unwrap();
    // The held one comes back in a fresh message, a second later: its delivery is acknowledged,
    // so no number of busy claims is a failed receive on the way to the dead-letter queue.
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    assert_eq!(state(&db, &free).await, (TaskStatus::Succeeded, 1), "the other did not wait for it");
    assert_eq!(state(&db, &held).await, (TaskStatus::Queued, 0));
    let resent = queues.drain(&queues.tasks, Duration::from_secs(4)).await;
    assert_eq!(resent, vec![format!("{{\"taskId\":\"{}\"}}", held.id)], "only the held one comes back");
}

#[tokio::test]
async fn records_are_claimed_as_they_can_run_so_none_waits_claimed() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_millis(300)));
    let app = app(&db, &queues, &stub, &[("AITASK_RECORD_CONCURRENCY", "2")]).await;
    let mut tasks = Vec::new();
    for i in 0..5 {
        tasks.push(task(&db, &format!("t-{i}"), "Sentiment?", 3).await);
    }
    db.reset_statements().await;
    let response =
        process_task::handle(&app, event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60)))
            .await
            .unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let (claims, claimed) = db.statement_calls("started_at = COALESCE(started_at, now())").await;
    assert_eq!((claims, claimed), (3, 5), "a wave of 2, of 2, then of 1: each claimed as it starts");
    assert!(stub.peak_in_flight() <= 2);
    for task in &tasks {
        assert_eq!(state(&db, task).await, (TaskStatus::Succeeded, 1));
    }
}
