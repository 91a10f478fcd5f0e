//! Each attempt of a task on record (the trigger on `tasks`, `task_status_changed`, migrations/V38), through
//! the store's own statements: every way out of `running` that spends the attempt is recorded
//! once, with the error it left and a success's usage; an attempt given back uncounted is not;
//! the record is bounded; another application's task is not found.

use std::time::Duration;

use aitasks_contracts::{AttemptOutcome, AttemptUsage, ErrorCode};
use aitasks_store::{self as store, Claim, TaskStatus};
use aitasks_testkit::*;
use serde_json::json;

async fn attempts(db: &TestDb, task_id: uuid::Uuid) -> store::AttemptsOfTask {
    store::task_attempts(&db.client().await, APP, task_id, 100).await.unwrap().expect("the task")
}

async fn claimed(db: &TestDb, task_id: uuid::Uuid) -> store::Task {
    match claim_one(&db.client().await, task_id).await {
        Claim::Claimed(task) => task,
        other => panic!("expected a claim, got {other:?}"),
    }
}

#[tokio::test]
async fn every_way_out_of_running_is_recorded_once_and_a_give_back_not_at_all() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    assert_eq!(attempts(&db, task.id).await, store::AttemptsOfTask { ended: vec![], running: None });

    // Given back unworked (a provider limit before any call): uncounted, not recorded.
    let first = claimed(&db, task.id).await;
    assert!(store::give_back(&client, first.lease()).await.unwrap());
    assert_eq!(attempts(&db, task.id).await.ended, vec![]);

    // Attempt 1: a retryable error, back to the queue.
    let first = claimed(&db, task.id).await;
    assert_eq!(first.attempts, 1);
    let running = attempts(&db, task.id).await.running.expect("the running attempt");
    assert_eq!((running.attempt, running.outcome, running.ended_at), (1, AttemptOutcome::Running, None));
    assert!(store::requeue_attempt(&client, first.lease(), ErrorCode::ProviderError, "HTTP 500")
        .await
        .unwrap());
    // Attempt 2: its worker dies; the sweeper requeues it.
    claimed(&db, task.id).await;
    db.sql("UPDATE tasks SET heartbeat_at = now() - interval '1 minute'").await;
    let expired = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert_eq!(expired.requeued.len(), 1);
    // Attempt 3 answers.
    let third = claimed(&db, task.id).await;
    let usage = json!({"inputTokens": 5, "outputTokens": 3, "model": "m-2026", "latencyMs": 9, "calls": 1,
                       "profile": "fallback", "estimatedCostUsd": 0.25});
    assert!(matches!(
        store::complete_attempt(&client, third.lease(), &json!("pos"), Some(&usage), false).await.unwrap(),
        store::Fenced::Written(_)
    ));

    let record = attempts(&db, task.id).await;
    assert_eq!(record.running, None, "it has ended");
    let summary: Vec<(u32, AttemptOutcome, Option<&str>)> =
        record.ended.iter().map(|a| (a.attempt, a.outcome, a.error_code.as_deref())).collect();
    assert_eq!(
        summary,
        [
            (1, AttemptOutcome::Retried, Some("WORKFLOW_AI_PROVIDER_ERROR")),
            (2, AttemptOutcome::Retried, Some("WORKFLOW_AI_INTERRUPTED")),
            (3, AttemptOutcome::Succeeded, None),
        ]
    );
    assert_eq!(record.ended[0].error_message.as_deref(), Some("HTTP 500"));
    let success = &record.ended[2];
    assert_eq!(success.usage, Some(AttemptUsage { input_tokens: 5, output_tokens: 3 }));
    assert_eq!(success.estimated_cost_usd, Some(0.25));
    assert_eq!((success.profile.as_deref(), success.model_id.as_deref()), (Some("fallback"), Some("m-2026")));
    for pair in record.ended.windows(2) {
        let ended = pair[0].ended_at.expect("ended");
        assert!(pair[0].started_at <= ended && ended <= pair[1].started_at, "{pair:?}");
    }
    // The task shows only its last error (none: it succeeded); the record keeps each one's.
    let now = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!((now.status, now.error_code), (TaskStatus::Succeeded, None));

    // Another application's task is not found.
    assert_eq!(store::task_attempts(&client, "someone-else", task.id, 100).await.unwrap(), None);
}

#[tokio::test]
async fn a_failure_and_a_cancel_end_the_attempt_that_ran() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let failing = store::create_task(&client, &new_task(APP, app_owner("s"), "f")).await.unwrap().into_task();
    let lease = claimed(&db, failing.id).await.lease();
    store::fail_attempt(&client, lease, ErrorCode::ProviderAuth, "bad key").await.unwrap();
    let record = store::task_attempts(&client, APP, failing.id, 100).await.unwrap().unwrap();
    assert_eq!(record.ended.len(), 1);
    assert_eq!(
        (record.ended[0].outcome, record.ended[0].error_code.as_deref()),
        (AttemptOutcome::Failed, Some("AI_PROVIDER_AUTH"))
    );
    assert_eq!(record.ended[0].usage, None);

    let canceled =
        store::create_task(&client, &new_task(APP, app_owner("s"), "c")).await.unwrap().into_task();
    claimed(&db, canceled.id).await;
    store::request_cancel(&client, APP, canceled.id).await.unwrap();
    assert!(store::task_attempts(&client, APP, canceled.id, 100).await.unwrap().unwrap().running.is_some());
    store::end_canceled(&client, canceled.id).await.unwrap();
    let record = store::task_attempts(&client, APP, canceled.id, 100).await.unwrap().unwrap();
    assert_eq!(record.ended.len(), 1);
    assert_eq!((record.ended[0].attempt, record.ended[0].outcome), (1, AttemptOutcome::Canceled));
    assert_eq!(record.ended[0].error_code.as_deref(), Some("WORKFLOW_AI_CANCELED"));

    // A queued task canceled before any attempt has none.
    let never = store::create_task(&client, &new_task(APP, app_owner("s"), "n")).await.unwrap().into_task();
    store::request_cancel(&client, APP, never.id).await.unwrap();
    assert_eq!(store::task_attempts(&client, APP, never.id, 100).await.unwrap().unwrap().ended, vec![]);
}

/// The record is bounded whatever writes it: the last 100 attempts, each error message at most
/// 2,000 characters.
#[tokio::test]
async fn the_record_keeps_the_last_100_attempts_and_bounded_messages() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let id = task.id;
    db.sql_as_owner(&format!(
        "ALTER TABLE tasks DROP CONSTRAINT tasks_attempt_budget_check; \
         UPDATE tasks SET max_attempts = 100, attempts = 100, status = 'running', heartbeat_at = now(), \
             attempt_log = (SELECT jsonb_agg(jsonb_build_object('attempt', n, 'startedAt', now(), 'endedAt', now(), \
                 'outcome', 'retried', 'errorCode', 'X')) FROM generate_series(1, 100) n) WHERE id = '{id}'; \
         UPDATE tasks SET attempts = 101 WHERE id = '{id}'; \
         UPDATE tasks SET status = 'failed', error_code = 'WORKFLOW_AI_PROVIDER_ERROR', \
             error_message = repeat('é', 5000), completed_at = now() WHERE id = '{id}'"
    ))
    .await;
    let record = store::task_attempts(&client, APP, id, 1_000).await.unwrap().unwrap();
    assert_eq!(record.ended.len(), 100, "the oldest went");
    assert_eq!((record.ended[0].attempt, record.ended[99].attempt), (2, 101));
    assert_eq!(record.ended[99].outcome, AttemptOutcome::Failed);
    assert_eq!(record.ended[99].error_message.as_deref().map(|m| m.chars().count()), Some(2_000));
    // A page is what the caller asks for, oldest first.
    let page = store::task_attempts(&client, APP, id, 10).await.unwrap().unwrap();
    assert_eq!(page.ended.iter().map(|a| a.attempt).collect::<Vec<_>>(), (2..12).collect::<Vec<_>>());
}
