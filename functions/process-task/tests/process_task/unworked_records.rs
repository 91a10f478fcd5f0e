//! Review: records a worker returns without having called anyone. A give-back is acknowledged
//! and sent again in a fresh message, so no number of them reaches the dead-letter queue, and it
//! costs no attempt. Two other ways a record comes back unworked do not keep those promises.

use std::time::Duration;

use aitasks_store::{Task, TaskStatus};
use aitasks_testkit::*;
use serde_json::json;

use crate::common::*;

async fn state(db: &TestDb, task: &Task) -> (TaskStatus, i32, Option<String>) {
    let task = aitasks_store::get_task(&db.client().await, APP, task.id).await.unwrap().unwrap();
    (task.status, task.attempts, task.error_code)
}

/// With fewer records run at once than a batch holds (AITASK_RECORD_CONCURRENCY), a wave that
/// starts too late is not claimed (process.rs run_wave) and its records are reported as batch
/// item failures: each such delivery is a failed receive, so a task that keeps landing in a
/// batch's last wave reaches the dead-letter queue after maxReceiveCount (10) deliveries without
/// one attempt. An attempt claimed too late (Ending::NoTime) is acknowledged with a fresh message
/// instead.
#[tokio::test]
async fn a_record_of_a_wave_too_late_to_start_is_not_a_failed_receive() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_secs(30)));
    let overrides = [("AITASK_RECORD_CONCURRENCY", "1"), ("AITASK_DEADLINE_MARGIN_MS", "1000")];
    let app = app(&db, &queues, &stub, &overrides).await;
    let first = task(&db, "first", "Sentiment?", 3).await;
    let second = task(&db, "second", "Sentiment?", 3).await;
    // The first wave's call runs until the deadline's stop (3 s of 4); the second wave is late.
    let response =
        process_task::handle(&app, event(&[&first, &second], Duration::from_secs(4))).await.unwrap();
    let failed: Vec<&str> = response.batch_item_failures.iter().map(|f| f.item_identifier.as_str()).collect();
    assert_eq!(state(&db, &second).await, (TaskStatus::Queued, 0, None), "never claimed");
    assert!(
        !failed.contains(&"m-second"),
        "the unclaimed record counted a receive toward the DLQ: failures {failed:?}"
    );
}

/// An attempt whose provider limits cannot be checked before the deadline's stop (here the
/// limits' table is locked, as a slow database or a long wait on the minute's row would hold
/// it) made no provider call, yet the deadline ends it as WORKFLOW_AI_INTERRUPTED and counts
/// the attempt (decision.rs: Ending::Deadline requeues with the attempt spent).
#[tokio::test]
async fn an_attempt_stopped_before_any_call_costs_no_attempt() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"concurrent": 1}}}).to_string();
    let overrides = [("AITASK_MODELS", models.as_str()), ("AITASK_DEADLINE_MARGIN_MS", "1000")];
    let app = app(&db, &queues, &stub, &overrides).await;
    let task = task(&db, "waits-for-limits", "Sentiment?", 3).await;
    let mut client = db.client().await;
    let holder = client.transaction().await.unwrap();
    holder.batch_execute("LOCK TABLE provider_slots IN EXCLUSIVE MODE").await.unwrap();
    process_task::handle(&app, event(&[&task], Duration::from_secs(4))).await.unwrap();
    holder.rollback().await.unwrap();
    // The slot statement the lock held up goes on once it is released: until it has ended.
    db.wait_until_not_running("provider_slots").await;
    assert_eq!(stub.calls(), 0, "no provider call was made");
    assert_eq!(
        state(&db, &task).await,
        (TaskStatus::Queued, 0, None),
        "an attempt that called no one is not counted"
    );
}
