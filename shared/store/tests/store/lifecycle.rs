//! The task lifecycle against a real Postgres: idempotent creation, claims, fencing, races,
//! cancellation, expiry and the outbox. Time is moved by rewriting timestamps, never by sleeping.

use aitasks_contracts::ErrorCode;
use std::sync::Arc;
use std::time::Duration;

use aitasks_store as store;
use aitasks_testkit::*;
use futures::future::join_all;
use serde_json::json;
use store::{Claim, Fenced, LeaseCheck, StoreError, TaskOwner, TaskStatus};

async fn claimed(db: &TestDb, task_id: uuid::Uuid) -> store::Task {
    match claim_one(&db.client().await, task_id).await {
        Claim::Claimed(task) => task,
        other => panic!("expected a claim, got {other:?}"),
    }
}

#[tokio::test]
async fn a_task_goes_from_queued_to_succeeded_with_one_event() {
    let db = TestDb::new().await;
    let run = run(&db, APP).await;
    let client = db.client().await;
    let created = store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "run/1")).await.unwrap();
    assert!(created.is_new());
    let task = created.task().clone();
    assert_eq!(task.status, TaskStatus::Queued);
    assert_eq!(task.attempts, 0);
    assert_eq!(task.usage_user_id.as_deref(), Some("user-9"), "the run's actor is attributed");
    assert_eq!(task.scope_id.as_deref(), Some("scope-1"));
    assert_eq!(
        store::get_task(&client, APP, task.id).await.unwrap().as_ref(),
        Some(&task),
        "the create answers with the task exactly as stored"
    );

    let running = claimed(&db, task.id).await;
    assert_eq!(running.status, TaskStatus::Running);
    assert_eq!(running.attempts, 1);
    assert!(running.started_at.is_some() && running.heartbeat_at.is_some());
    assert_eq!(store::heartbeat(&client, running.lease()).await.unwrap(), LeaseCheck::Active);
    assert_eq!(store::check(&client, running.lease()).await.unwrap(), LeaseCheck::Active);

    let usage = json!({"inputTokens": 10, "outputTokens": 2, "model": "test-model"});
    let Fenced::Written(event) =
        store::complete_attempt(&client, running.lease(), &json!("pos"), Some(&usage), false).await.unwrap()
    else {
        panic!("complete lost")
    };
    let settled = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(settled.status, TaskStatus::Succeeded);
    assert_eq!(settled.output, Some(json!("pos")));
    assert_eq!(settled.usage, Some(usage));
    assert_eq!(event.task_id, task.id);
    assert_eq!(event.payload["type"], "task.settled");
    assert_eq!(event.payload["taskId"], task.id.to_string());
    assert_eq!(event.payload["status"], "succeeded");
    assert_eq!(event.payload["effectKey"], "run/1");
    assert_eq!(event.payload["runId"], run.id.to_string());
    let completed_at = settled.completed_at.unwrap().format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
    assert_eq!(event.payload["completedAt"], completed_at.as_str());
    assert_eq!(
        db.count(&format!(
            "SELECT count(*) FROM task_events WHERE id = {} AND payload->>'status' = 'succeeded'",
            event.id
        ))
        .await,
        1,
        "the event returned is the one stored"
    );

    // Terminal is final: a second complete, a fail and a claim change nothing.
    assert_eq!(
        store::complete_attempt(&client, running.lease(), &json!("neg"), None, false).await.unwrap(),
        Fenced::Lost
    );
    assert_eq!(
        store::fail_attempt(&client, running.lease(), ErrorCode::ProviderError, "late").await.unwrap(),
        Fenced::Lost
    );
    assert_eq!(claim_one(&client, task.id).await, Claim::NotClaimable(TaskStatus::Succeeded));
    let stored = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(stored.output, Some(json!("pos")));
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 1);
}

/// A create does not read the request back; what it answers must still be the stored row.
#[tokio::test]
async fn an_application_task_is_answered_exactly_as_stored() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut spec = new_task(APP, app_owner("scope-7"), "app/1");
    spec.request = json!({"kind": "classify", "prompt": "P?", "input": "x", "choices": ["b", "a"],
                          "options": {"z": 1.5, "a": [1, {"y": null, "b": true}]}});
    let created = store::create_task(&client, &spec).await.unwrap().into_task();
    assert_eq!(created.usage_subject, Some(json!({"type": "user", "id": "u1"})));
    assert_eq!(created.scope_id.as_deref(), Some("scope-7"));
    assert_eq!(store::get_task(&client, APP, created.id).await.unwrap(), Some(created));
}

#[tokio::test]
async fn thirty_two_concurrent_creates_with_one_effect_key_make_one_task() {
    let db = Arc::new(TestDb::new().await);
    let run = run(&db, APP).await;
    let creates = (0..32).map(|_| {
        let db = db.clone();
        async move {
            let client = db.client().await;
            store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "same-key")).await.unwrap()
        }
    });
    let results = join_all(creates).await;
    let created: Vec<_> = results.iter().filter(|c| c.is_new()).collect();
    assert_eq!(created.len(), 1, "exactly one create wins");
    let id = created[0].task().id;
    assert!(results.iter().all(|c| c.task().id == id), "the other 31 return the same task");
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 1);
}

#[tokio::test]
async fn an_existing_effect_key_returns_the_task_untouched() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let first = store::create_task(&client, &new_task(APP, app_owner("s1"), "k")).await.unwrap().into_task();
    let running = claimed(&db, first.id).await;
    let again = store::create_task(&client, &new_task(APP, app_owner("s1"), "k")).await.unwrap();
    assert!(!again.is_new());
    assert_eq!(again.task(), &running, "the existing task comes back exactly as stored");
}

#[tokio::test]
async fn effect_keys_and_reads_are_per_application() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let a = store::create_task(&client, &new_task("app-a", app_owner("s"), "shared-key")).await.unwrap();
    let b = store::create_task(&client, &new_task("app-b", app_owner("s"), "shared-key")).await.unwrap();
    assert!(a.is_new() && b.is_new());
    assert_ne!(a.task().id, b.task().id);
    assert_eq!(store::get_task(&client, "app-b", a.task().id).await.unwrap(), None);
    assert_eq!(store::get_task(&client, "app-a", b.task().id).await.unwrap(), None);
    assert_eq!(
        store::get_task_by_effect_key(&client, "app-a", "shared-key").await.unwrap().map(|t| t.id),
        Some(a.task().id)
    );
    assert_eq!(
        store::get_task_by_effect_key(&client, "app-b", "shared-key").await.unwrap().map(|t| t.id),
        Some(b.task().id)
    );
    assert_eq!(store::request_cancel(&client, "app-b", a.task().id).await.unwrap(), None);
    assert_eq!(
        store::get_task(&client, "app-a", a.task().id).await.unwrap().unwrap().status,
        TaskStatus::Queued
    );
}

#[tokio::test]
async fn eight_concurrent_claims_of_one_task_have_one_winner() {
    let db = Arc::new(TestDb::new().await);
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let claims = (0..8).map(|_| {
        let db = db.clone();
        async move { claim_one(&db.client().await, task.id).await }
    });
    let results = join_all(claims).await;
    let winners = results.iter().filter(|c| matches!(c, Claim::Claimed(_))).count();
    assert_eq!(winners, 1);
    assert!(results
        .iter()
        // A claimant that meets the winner's row lock skips it (Busy) rather than wait.
        .all(|c| matches!(c, Claim::Claimed(_) | Claim::Busy | Claim::NotClaimable(TaskStatus::Running))));
    let stored = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(stored.attempts, 1);
}

#[tokio::test]
async fn complete_racing_cancel_settles_each_task_exactly_once() {
    let db = Arc::new(TestDb::new().await);
    let mut leases = Vec::new();
    for i in 0..200 {
        let client = db.client().await;
        let task = store::create_task(&client, &new_task(APP, app_owner("s"), &format!("race-{i}")))
            .await
            .unwrap()
            .into_task();
        leases.push(claimed(&db, task.id).await.lease());
    }
    let races = leases.into_iter().map(|lease| {
        let db = db.clone();
        async move {
            let worker = async {
                let client = db.client().await;
                match store::complete_attempt(&client, lease, &json!("pos"), None, false).await.unwrap() {
                    Fenced::Written(_) => true,
                    // The cancel got in first: the worker settles it, as process-task does.
                    Fenced::Lost => {
                        matches!(
                            store::end_canceled(&client, lease.task_id).await.unwrap(),
                            Fenced::Written(_)
                        )
                    }
                }
            };
            let canceler = async {
                let client = db.client().await;
                store::request_cancel(&client, APP, lease.task_id).await.unwrap().unwrap()
            };
            tokio::join!(worker, canceler)
        }
    });
    join_all(races).await;
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE status IN ('queued', 'running')").await, 0);
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE status IN ('succeeded', 'canceled')").await, 200);
    assert_eq!(
        db.count(
            "SELECT count(*) FROM (SELECT task_id FROM task_events GROUP BY task_id HAVING count(*) = 1) e"
        )
        .await,
        200,
        "exactly one completion event per task"
    );
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 200);
    assert_eq!(
        db.count("SELECT count(*) FROM tasks t JOIN task_events e ON e.task_id = t.id WHERE e.payload->>'status' <> t.status")
            .await,
        0,
        "each event reports the state the task ended in"
    );
}

#[tokio::test]
async fn a_stale_worker_cannot_settle_after_the_sweeper_requeued_its_task() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let stale = claimed(&db, task.id).await.lease();
    db.sql("UPDATE tasks SET heartbeat_at = now() - interval '10 minutes'").await;
    let expired = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert_eq!(expired.requeued.len(), 1);

    assert_eq!(
        store::complete_attempt(&client, stale, &json!("pos"), None, false).await.unwrap(),
        Fenced::Lost
    );
    assert_eq!(
        store::fail_attempt(&client, stale, ErrorCode::ProviderError, "x").await.unwrap(),
        Fenced::Lost
    );
    assert_eq!(store::heartbeat(&client, stale).await.unwrap(), LeaseCheck::Lost);
    assert!(!store::requeue_attempt(&client, stale, ErrorCode::ProviderError, "x").await.unwrap());
    let now = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(now.status, TaskStatus::Queued);
    assert_eq!(now.output, None);

    // The next claim is attempt 2; the stale attempt-1 lease still loses against it.
    let fresh = claimed(&db, task.id).await;
    assert_eq!(fresh.attempts, 2);
    assert_eq!(
        store::complete_attempt(&client, stale, &json!("pos"), None, false).await.unwrap(),
        Fenced::Lost
    );
    assert!(matches!(
        store::complete_attempt(&client, fresh.lease(), &json!("neg"), None, false).await.unwrap(),
        Fenced::Written(_)
    ));
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 1);
}

/// A claim commits without waiting for the WAL flush, so a crash can lose it. What recovery
/// then shows is the task as it was before the claim; its worker must find its lease gone, and
/// the next claim must settle the task once.
#[tokio::test]
async fn a_claim_lost_in_a_crash_leaves_a_task_that_settles_once() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let lost = claimed(&db, task.id).await.lease();
    db.sql(&format!(
        "UPDATE tasks SET status = 'queued', attempts = 0, started_at = NULL, heartbeat_at = NULL \
         WHERE id = '{}'",
        task.id
    ))
    .await;

    assert_eq!(store::heartbeat(&client, lost).await.unwrap(), LeaseCheck::Lost);
    assert_eq!(
        store::complete_attempt(&client, lost, &json!("pos"), None, false).await.unwrap(),
        Fenced::Lost
    );
    let again = claimed(&db, task.id).await;
    assert_eq!(again.attempts, 1, "the lost attempt was not counted");
    assert!(matches!(
        store::complete_attempt(&client, again.lease(), &json!("neg"), None, false).await.unwrap(),
        Fenced::Written(_)
    ));
    assert_eq!(
        store::complete_attempt(&client, lost, &json!("pos"), None, false).await.unwrap(),
        Fenced::Lost
    );
    let settled = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!((settled.status, settled.output), (TaskStatus::Succeeded, Some(json!("neg"))));
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 1);
}

#[tokio::test]
async fn a_queued_task_past_the_queue_timeout_fails() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let old = store::create_task(&client, &new_task(APP, app_owner("s"), "old")).await.unwrap().into_task();
    let fresh =
        store::create_task(&client, &new_task(APP, app_owner("s"), "fresh")).await.unwrap().into_task();
    // Created 16 minutes ago, and given back a moment ago (a give-back touches updated_at): the
    // timeout counts from the creation.
    db.sql(&format!(
        "UPDATE tasks SET created_at = now() - interval '16 minutes', updated_at = now() WHERE id = '{}'",
        old.id
    ))
    .await;
    let settled = store::expire_queued(&client, Duration::from_secs(900), 100).await.unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].task.id, old.id);
    assert_eq!(settled[0].task.status, TaskStatus::Failed);
    assert_eq!(settled[0].task.error_code.as_deref(), Some("WORKFLOW_AI_QUEUE_TIMEOUT"));
    assert_eq!(settled[0].event.payload["errorCode"], "WORKFLOW_AI_QUEUE_TIMEOUT");
    let untouched = store::get_task(&client, APP, fresh.id).await.unwrap().unwrap();
    assert_eq!(untouched.status, TaskStatus::Queued);
}

#[tokio::test]
async fn a_stale_running_task_is_requeued_then_interrupted_when_its_budget_is_spent() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut spec = new_task(APP, app_owner("s"), "k");
    spec.max_attempts = 2;
    let task = store::create_task(&client, &spec).await.unwrap().into_task();

    claimed(&db, task.id).await;
    db.sql("UPDATE tasks SET heartbeat_at = now() - interval '1 minute'").await;
    let first = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert_eq!(first.requeued.iter().map(|t| t.id).collect::<Vec<_>>(), vec![task.id]);
    assert!(first.settled.is_empty());
    assert_eq!(first.requeued[0].status, TaskStatus::Queued);
    assert_eq!(first.requeued[0].error_code.as_deref(), Some("WORKFLOW_AI_INTERRUPTED"));
    // Marked sent: the sweeper sends its message itself, after the backoff. The re-send duty
    // lists it only once that send is overdue (lost), or at once if the send failed (unmarked).
    assert!(store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(300), 100)
        .await
        .unwrap()
        .is_empty());
    assert!(store::take_unsent(&client, Duration::from_secs(5), Duration::ZERO, 100)
        .await
        .unwrap()
        .iter()
        .any(|owed| owed.task_id == task.id));

    claimed(&db, task.id).await;
    db.sql("UPDATE tasks SET heartbeat_at = now() - interval '1 minute'").await;
    let second = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert!(second.requeued.is_empty());
    assert_eq!(second.settled.len(), 1);
    let ended = &second.settled[0].task;
    assert_eq!((ended.status, ended.attempts), (TaskStatus::Failed, 2));
    assert_eq!(ended.error_code.as_deref(), Some("WORKFLOW_AI_INTERRUPTED"));
}

#[tokio::test]
async fn a_stale_running_task_with_a_cancel_request_ends_canceled() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    claimed(&db, task.id).await;
    assert!(matches!(
        store::request_cancel(&client, APP, task.id).await.unwrap(),
        Some(store::CancelRequest::Flagged(_))
    ));
    db.sql("UPDATE tasks SET heartbeat_at = now() - interval '1 minute'").await;
    let expired = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert_eq!(expired.settled.len(), 1);
    assert_eq!(expired.settled[0].task.status, TaskStatus::Canceled);
    assert_eq!(expired.settled[0].task.error_code.as_deref(), Some("WORKFLOW_AI_CANCELED"));
}

#[tokio::test]
async fn a_request_over_the_size_limit_as_stored_is_refused_and_stores_nothing() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut spec = new_task(APP, app_owner("s"), "big");
    spec.request = json!({"kind": "classify", "prompt": "p", "input": {"text": "x".repeat(100_000)}, "choices": ["a", "b"]});
    let error = store::create_task(&client, &spec).await.unwrap_err();
    assert!(matches!(error, StoreError::RequestTooLarge), "got {error:?}");
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 0);

    // The limit is on the stored jsonb text: `{"text": "` + n + `"}` is n + 12 bytes.
    spec.request = json!({"text": "x".repeat(99_988)});
    spec.effect_key = "exactly-at-the-limit".into();
    assert!(store::create_task(&client, &spec).await.unwrap().is_new());
    spec.request = json!({"text": "x".repeat(99_989)});
    spec.effect_key = "one-byte-over".into();
    assert!(matches!(store::create_task(&client, &spec).await, Err(StoreError::RequestTooLarge)));
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 1);
}

#[tokio::test]
async fn a_canceled_run_takes_no_new_tasks() {
    let db = TestDb::new().await;
    let run = run(&db, APP).await;
    let client = db.client().await;
    store::cancel_run(&client, APP, run.id).await.unwrap().unwrap();
    let error =
        store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "late")).await.unwrap_err();
    assert!(matches!(error, StoreError::RunUnavailable), "got {error:?}");
    let missing = store::create_task(&client, &new_task(APP, TaskOwner::Run(uuid::Uuid::new_v4()), "x"))
        .await
        .unwrap_err();
    assert!(matches!(missing, StoreError::RunNotFound), "got {missing:?}");
    let other_app =
        store::create_task(&client, &new_task("app-2", TaskOwner::Run(run.id), "x")).await.unwrap_err();
    assert!(matches!(other_app, StoreError::RunNotFound), "another app's run is not found: {other_app:?}");
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 0);
}

#[tokio::test]
async fn canceling_a_run_cancels_its_queued_tasks_and_flags_its_running_ones() {
    let db = TestDb::new().await;
    let run = run(&db, APP).await;
    let other_run = aitasks_testkit::run(&db, APP).await;
    let client = db.client().await;
    let queued = store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "q")).await.unwrap();
    let running = store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "r")).await.unwrap();
    let bystander =
        store::create_task(&client, &new_task(APP, TaskOwner::Run(other_run.id), "b")).await.unwrap();
    let lease = claimed(&db, running.task().id).await.lease();

    assert_eq!(store::cancel_run(&client, "app-2", run.id).await.unwrap(), None, "another app's run");
    let canceled = store::cancel_run(&client, APP, run.id).await.unwrap().unwrap();
    assert_eq!(canceled.state, store::RunState::Canceled);
    assert!(canceled.cancel_requested_at.is_some());
    assert!(!store::finish_run_cancel(&client, run.id).await.unwrap(), "its tasks are not reached yet");
    let batch = store::cancel_run_tasks(&client, run.id, 10).await.unwrap();
    assert_eq!(batch.ended.len(), 1);
    assert_eq!(batch.ended[0].task_id, queued.task().id);
    assert_eq!(batch.ended[0].payload["status"], "canceled");
    assert_eq!(batch.flagged, vec![running.task().id]);
    assert!(store::finish_run_cancel(&client, run.id).await.unwrap(), "every task reached");
    let q = store::get_task(&client, APP, queued.task().id).await.unwrap().unwrap();
    assert_eq!(q.status, TaskStatus::Canceled);

    // The running task's worker notices on its next check and settles the cancel.
    assert_eq!(store::check(&client, lease).await.unwrap(), LeaseCheck::CancelRequested);
    assert_eq!(
        store::complete_attempt(&client, lease, &json!("pos"), None, false).await.unwrap(),
        Fenced::Lost
    );
    assert!(matches!(store::end_canceled(&client, lease.task_id).await.unwrap(), Fenced::Written(_)));
    let b = store::get_task(&client, APP, bystander.task().id).await.unwrap().unwrap();
    assert_eq!(b.status, TaskStatus::Queued, "other runs are untouched");

    store::cancel_run(&client, APP, run.id).await.unwrap().unwrap();
    let again = store::cancel_run_tasks(&client, run.id, 10).await.unwrap();
    assert_eq!(again.touched(), 0, "cancel is idempotent");
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 2);
}

#[tokio::test]
async fn cancel_of_a_queued_task_settles_it_and_of_a_terminal_task_changes_nothing() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let Some(store::CancelRequest::Canceled(settled)) =
        store::request_cancel(&client, APP, task.id).await.unwrap()
    else {
        panic!("a queued task is canceled at once")
    };
    assert_eq!(settled.task.status, TaskStatus::Canceled);
    assert_eq!(settled.task.error_code.as_deref(), Some("WORKFLOW_AI_CANCELED"));
    let Some(store::CancelRequest::AlreadyTerminal(same)) =
        store::request_cancel(&client, APP, task.id).await.unwrap()
    else {
        panic!("a terminal task stays as it is")
    };
    assert_eq!(same, settled.task);
    assert_eq!(claim_one(&client, task.id).await, Claim::NotClaimable(TaskStatus::Canceled));
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 1);
}

#[tokio::test]
async fn requeue_keeps_the_error_and_respects_the_attempt_budget() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut spec = new_task(APP, app_owner("s"), "k");
    spec.max_attempts = 2;
    let task = store::create_task(&client, &spec).await.unwrap().into_task();
    let first = claimed(&db, task.id).await.lease();
    assert!(store::requeue_attempt(&client, first, ErrorCode::ProviderError, "HTTP 500").await.unwrap());
    let queued = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(
        (queued.status, queued.error_code.as_deref()),
        (TaskStatus::Queued, Some("WORKFLOW_AI_PROVIDER_ERROR"))
    );
    let second = claimed(&db, task.id).await.lease();
    assert!(
        !store::requeue_attempt(&client, second, ErrorCode::ProviderError, "x").await.unwrap(),
        "no attempts left to requeue into"
    );
    let Fenced::Written(event) =
        store::fail_attempt(&client, second, ErrorCode::ProviderError, &"é".repeat(5000)).await.unwrap()
    else {
        panic!("fail lost")
    };
    assert_eq!(event.payload["errorCode"], "WORKFLOW_AI_PROVIDER_ERROR");
    let failed = store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(failed.error_message.unwrap().chars().count(), 2000, "messages are truncated, not refused");
    assert_eq!(claim_one(&client, task.id).await, Claim::NotClaimable(TaskStatus::Failed));
}

#[tokio::test]
async fn a_deleted_task_is_lost_to_its_worker() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let lease = claimed(&db, task.id).await.lease();
    db.sql("DELETE FROM tasks").await;
    assert_eq!(store::check(&client, lease).await.unwrap(), LeaseCheck::Lost);
    assert_eq!(store::heartbeat(&client, lease).await.unwrap(), LeaseCheck::Lost);
    assert_eq!(
        store::complete_attempt(&client, lease, &json!("pos"), None, false).await.unwrap(),
        Fenced::Lost
    );
    assert_eq!(claim_one(&client, task.id).await, Claim::Missing);
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 0);
}
