//! Deferred tasks and the batches that carry them, against a real Postgres: a task awaiting a
//! batch owes no message and outlives the queue timeout within its window; batches are formed
//! by profile (full, or after the wait, or sent on-demand below the minimum), split between
//! concurrent batchers; a batch's lease fences results like an attempt's; a cancel ends a task
//! in a batch at once; what a batch does not answer goes back uncounted.

use std::sync::Arc;
use std::time::Duration;

use aitasks_store::{self as store, BatchGroup, Fenced, Formed, TaskStatus};
use aitasks_testkit::*;
use futures::future::join_all;
use serde_json::json;
use uuid::Uuid;

const HOUR_MS: i64 = 3_600_000;

fn deferred(key: &str, window_ms: i64) -> store::NewTask {
    let mut task = new_task(APP, app_owner("s"), key);
    task.deferred_window_ms = Some(window_ms);
    task.awaiting_batch = true;
    task
}

fn group(max_records: u32, max_wait: Duration, min_records: u32) -> BatchGroup<'static> {
    BatchGroup {
        profile: "default",
        provider: "openai",
        max_records,
        max_bytes: 50_000_000,
        max_wait,
        min_records,
        slack: Duration::from_secs(1800),
    }
}

async fn create_deferred(db: &TestDb, n: usize, window_ms: i64) -> Vec<Uuid> {
    let client = db.client().await;
    let mut ids = Vec::new();
    for i in 0..n {
        let created = store::create_task(&client, &deferred(&format!("d{i}"), window_ms)).await.unwrap();
        ids.push(created.task().id);
    }
    ids
}

#[tokio::test]
async fn a_task_awaiting_a_batch_owes_no_message_and_waits_out_the_queue_timeout_within_its_window() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let ids = create_deferred(&db, 3, 2 * HOUR_MS).await;
    let task = store::get_task(&client, APP, ids[0]).await.unwrap().unwrap();
    assert!(task.awaiting_batch);
    let window = task.deferred_by.unwrap() - task.created_at;
    assert_eq!(window.num_milliseconds(), 2 * HOUR_MS, "the window is the database's creation plus within");
    store::create_task(&client, &new_task(APP, app_owner("s"), "plain")).await.unwrap();
    // Sent 20 minutes ago (the plain task was inserted marked sent) and never claimed.
    db.sql(
        "UPDATE tasks SET created_at = now() - interval '20 minutes', \
            message_sent_at = message_sent_at - interval '20 minutes'",
    )
    .await;
    let owed =
        store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(300), 100).await.unwrap();
    assert_eq!(owed.len(), 1, "only the plain task owes a message");
    let expired = store::expire_queued(&client, Duration::from_secs(900), 100).await.unwrap();
    assert_eq!(expired.len(), 1, "the queue timeout ends only the plain task");
    // Past its window a deferred task ends too, with its own sentence.
    db.sql(&format!("UPDATE tasks SET deferred_by = now() - interval '1 second' WHERE id = '{}'", ids[1]))
        .await;
    let expired = store::expire_queued(&client, Duration::from_secs(900), 100).await.unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].task.id, ids[1]);
    assert_eq!(expired[0].task.error_code.as_deref(), Some("WORKFLOW_AI_QUEUE_TIMEOUT"));
    assert_eq!(
        expired[0].task.error_message.as_deref(),
        Some("The deferred task was not started within its window.")
    );
}

#[tokio::test]
async fn a_group_becomes_a_batch_when_full_or_after_the_wait_and_below_the_minimum_runs_on_demand() {
    let db = TestDb::new().await;
    let mut client = db.client().await;
    let ids = create_deferred(&db, 5, 2 * HOUR_MS).await;
    let hour = Duration::from_secs(3600);
    assert_eq!(store::form_batch(&mut client, &group(10, hour, 1)).await.unwrap(), Formed::Waiting);
    // Full at four: a batch of the four oldest, the fifth waits.
    let Formed::Opened { batch_id, tasks } =
        store::form_batch(&mut client, &group(4, hour, 1)).await.unwrap()
    else {
        panic!("a full group opens a batch")
    };
    assert_eq!(tasks, 4);
    let in_batch = store::batch_tasks(&client, batch_id).await.unwrap();
    assert_eq!(in_batch.len(), 4);
    assert!(in_batch.iter().all(|t| t.lease.attempt == 1 && ids[..4].contains(&t.lease.task_id)));
    let running = store::get_task(&client, APP, ids[0]).await.unwrap().unwrap();
    assert_eq!(running.status, TaskStatus::Running);
    assert!(!running.awaiting_batch);
    // The stale-running sweep leaves a batch's task alone until the batcher gives the batch up.
    let stale = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert!(stale.requeued.is_empty() && stale.settled.is_empty());
    // After the wait, one task is below a minimum of two: sent on-demand, marked sent.
    let Formed::SentNow(owed) = store::form_batch(&mut client, &group(10, Duration::ZERO, 2)).await.unwrap()
    else {
        panic!("below the minimum after the wait runs on-demand")
    };
    assert_eq!(owed.iter().map(|m| m.task_id).collect::<Vec<_>>(), vec![ids[4]]);
    assert_eq!(store::form_batch(&mut client, &group(10, Duration::ZERO, 1)).await.unwrap(), Formed::Nothing);
    let open = store::take_due_batches(&client, Duration::from_secs(300), 10).await.unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].records, 4);
    assert_eq!(open[0].state, store::BatchState::Submitting);
    assert!(store::take_due_batches(&client, Duration::from_secs(300), 10).await.unwrap().is_empty(), "held");
}

#[tokio::test]
async fn a_group_still_waiting_has_no_row_locked() {
    let db = TestDb::new().await;
    let mut client = db.client().await;
    create_deferred(&db, 3, 2 * HOUR_MS).await;
    // A row lock leaves its locker in the row's xmax, after the locker's end too.
    let locked = "SELECT count(*) FROM tasks WHERE xmax::text <> '0'";
    assert_eq!(db.count(locked).await, 0);
    let hour = Duration::from_secs(3600);
    for _ in 0..3 {
        assert_eq!(store::form_batch(&mut client, &group(10, hour, 1)).await.unwrap(), Formed::Waiting);
    }
    assert_eq!(db.count(locked).await, 0, "a group that waits is looked at unlocked");
    // Full by bytes, by count, or waited out, it forms.
    let row =
        client.query_one("SELECT max(octet_length(request::text))::bigint FROM tasks", &[]).await.unwrap();
    let mut by_bytes = group(10, hour, 1);
    by_bytes.max_bytes = 2 * row.get::<_, i64>(0) as u64;
    let Formed::Opened { tasks, .. } = store::form_batch(&mut client, &by_bytes).await.unwrap() else {
        panic!("a file's worth of bytes opens a batch")
    };
    assert_eq!(tasks, 2);
    let Formed::Opened { tasks, .. } = store::form_batch(&mut client, &group(1, hour, 1)).await.unwrap()
    else {
        panic!("a full group opens a batch")
    };
    assert_eq!(tasks, 1);
    assert_eq!(store::form_batch(&mut client, &group(10, hour, 1)).await.unwrap(), Formed::Nothing);
}

#[tokio::test]
async fn concurrent_batchers_split_the_awaiting_tasks_and_none_is_taken_twice() {
    let db = Arc::new(TestDb::new().await);
    create_deferred(&db, 300, 2 * HOUR_MS).await;
    let batchers = (0..4).map(|_| {
        let db = db.clone();
        async move {
            let mut client = db.client().await;
            let mut opened = Vec::new();
            loop {
                match store::form_batch(&mut client, &group(50, Duration::ZERO, 1)).await.unwrap() {
                    Formed::Opened { batch_id, .. } => opened.push(batch_id),
                    Formed::Nothing => break opened,
                    other => panic!("{other:?}"),
                }
            }
        }
    });
    let batches: Vec<Uuid> = join_all(batchers).await.into_iter().flatten().collect();
    let client = db.client().await;
    let mut claimed = Vec::new();
    for batch in &batches {
        claimed
            .extend(store::batch_tasks(&client, *batch).await.unwrap().into_iter().map(|t| t.lease.task_id));
    }
    let total = claimed.len();
    claimed.sort();
    claimed.dedup();
    assert_eq!((total, claimed.len()), (300, 300), "every task in exactly one batch");
}

#[tokio::test]
async fn a_batch_lease_fences_results_a_cancel_ends_a_batched_task_at_once_and_the_rest_go_back_uncounted() {
    let db = TestDb::new().await;
    let mut client = db.client().await;
    let ids = create_deferred(&db, 4, 2 * HOUR_MS).await;
    let Formed::Opened { batch_id, .. } =
        store::form_batch(&mut client, &group(4, Duration::ZERO, 1)).await.unwrap()
    else {
        panic!("opened")
    };
    let tasks = store::batch_tasks(&client, batch_id).await.unwrap();
    let lease = |id: Uuid| tasks.iter().find(|t| t.lease.task_id == id).unwrap().lease;
    // A cancel ends a task in a batch at once; its result, when it comes, changes nothing.
    let canceled = store::request_cancel(&client, APP, ids[0]).await.unwrap();
    assert_eq!(canceled.unwrap().task().status, TaskStatus::Canceled);
    let output = json!({"label": "a"});
    let written = store::complete_many(
        &client,
        &[(lease(ids[0]), &output, None), (lease(ids[1]), &output, None)],
        false,
    )
    .await
    .unwrap();
    assert!(matches!(written[0], Fenced::Lost), "the canceled task's result is discarded");
    assert!(matches!(written[1], Fenced::Written(_)));
    let again = store::complete_many(&client, &[(lease(ids[1]), &output, None)], false).await.unwrap();
    assert!(matches!(again[0], Fenced::Lost), "a duplicate result changes nothing");
    // An invalid answer goes to an on-demand repair turn, kept for that attempt.
    let resume = json!({"conversation": [], "problems": "p", "usage": {}});
    let back = store::give_back_for_repair(&client, lease(ids[2]), &resume).await.unwrap();
    assert_eq!(back.map(|m| m.task_id), Some(ids[2]));
    let repaired = store::get_task(&client, APP, ids[2]).await.unwrap().unwrap();
    assert_eq!(
        (repaired.status, repaired.attempts),
        (TaskStatus::Queued, 0),
        "the batch's attempt uncounted"
    );
    let claim = store::claim_by(&client, &[ids[2]], &claim_mark()).await.unwrap();
    let store::Claim::Claimed(claimed) = &claim[0] else { panic!("claimable on-demand") };
    assert_eq!(store::read_repair(&client, claimed.lease()).await.unwrap(), Some(resume.clone()));
    assert_eq!(store::read_repair(&client, claimed.lease()).await.unwrap(), Some(resume), "read, not taken");
    assert!(store::take_repair(&client, claimed.lease()).await.unwrap());
    assert!(!store::take_repair(&client, claimed.lease()).await.unwrap(), "taken once");
    assert_eq!(store::read_repair(&client, claimed.lease()).await.unwrap(), None);
    // The one no result named goes back to the queue, uncounted, its message owed now.
    let returned = store::give_back_batch(&client, batch_id).await.unwrap();
    assert_eq!(returned.iter().map(|m| m.task_id).collect::<Vec<_>>(), vec![ids[3]]);
    let last = store::get_task(&client, APP, ids[3]).await.unwrap().unwrap();
    assert_eq!((last.status, last.attempts, last.awaiting_batch), (TaskStatus::Queued, 0, false));
    assert!(store::end_batch(&client, batch_id, store::BatchOutcome::Completed, None).await.unwrap());
    assert!(!store::end_batch(&client, batch_id, store::BatchOutcome::Failed, None).await.unwrap(), "once");
}

#[tokio::test]
async fn a_late_result_of_a_batch_its_task_has_left_changes_nothing_though_the_attempt_matches() {
    let db = TestDb::new().await;
    let mut client = db.client().await;
    let ids = create_deferred(&db, 2, 2 * HOUR_MS).await;
    let Formed::Opened { batch_id: old, .. } =
        store::form_batch(&mut client, &group(2, Duration::ZERO, 1)).await.unwrap()
    else {
        panic!("opened")
    };
    let tasks = store::batch_tasks(&client, old).await.unwrap();
    let lease = |id: Uuid| tasks.iter().find(|t| t.lease.task_id == id).unwrap().lease;
    // The old batch gives its tasks back uncounted: the first is claimed on-demand, the second
    // is taken by a newer batch, each with the attempt number it had in the old one.
    assert_eq!(store::give_back_batch(&client, old).await.unwrap().len(), 2);
    let claim = store::claim_by(&client, &[ids[0]], &claim_mark()).await.unwrap();
    let store::Claim::Claimed(on_demand) = &claim[0] else { panic!("claimable on-demand") };
    assert_eq!(on_demand.lease().attempt, lease(ids[0]).attempt, "the same attempt number");
    assert_eq!(on_demand.lease().batch_id, None, "in no batch");
    db.sql(&format!("UPDATE tasks SET awaiting_batch = true WHERE id = '{}'", ids[1])).await;
    let Formed::Opened { batch_id: newer, .. } =
        store::form_batch(&mut client, &group(1, Duration::ZERO, 1)).await.unwrap()
    else {
        panic!("a newer batch")
    };
    let newer_lease = store::batch_tasks(&client, newer).await.unwrap()[0].lease;
    assert_eq!(newer_lease.attempt, lease(ids[1]).attempt, "the same attempt number");
    assert_eq!(newer_lease.batch_id, Some(newer), "in the newer batch");
    // The old batch's late results change nothing, whatever they say.
    let output = json!({"label": "a"});
    let late = [(lease(ids[0]), &output, None), (lease(ids[1]), &output, None)];
    let written = store::complete_many(&client, &late, false).await.unwrap();
    assert!(written.iter().all(|w| matches!(w, Fenced::Lost)), "{written:?}");
    let code = aitasks_contracts::ErrorCode::ProviderError;
    for id in ids.iter().copied() {
        let completed = store::complete_attempt(&client, lease(id), &output, None, false).await.unwrap();
        assert!(matches!(completed, Fenced::Lost), "the single statement is fenced too");
        let failed = store::fail_attempt(&client, lease(id), code, "late").await.unwrap();
        assert!(matches!(failed, Fenced::Lost));
        assert!(!store::requeue_attempt(&client, lease(id), code, "late").await.unwrap());
        assert!(!store::give_back(&client, lease(id)).await.unwrap());
    }
    for id in &ids {
        let task = store::get_task(&client, APP, *id).await.unwrap().unwrap();
        assert_eq!((task.status, task.attempts, task.error_code), (TaskStatus::Running, 1, None));
    }
    // The batch that holds the task now settles it, once.
    let now = [(newer_lease, &output, None)];
    assert!(matches!(store::complete_many(&client, &now, false).await.unwrap()[0], Fenced::Written(_)));
    assert!(matches!(store::complete_many(&client, &now, false).await.unwrap()[0], Fenced::Lost));
    let done = store::get_task(&client, APP, ids[1]).await.unwrap().unwrap();
    assert_eq!(done.status, TaskStatus::Succeeded);
}

#[tokio::test]
async fn tasks_near_their_window_s_end_run_on_demand_and_the_window_is_sampled() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let ids = create_deferred(&db, 2, 2 * HOUR_MS).await;
    let slack = Duration::from_secs(1800);
    assert!(store::send_due_now(&client, slack, 10).await.unwrap().is_empty());
    let left = store::nearest_window(&client, slack).await.unwrap().unwrap();
    assert!((left - 2.0 * HOUR_MS as f64).abs() < 60_000.0, "{left}");
    db.sql(&format!("UPDATE tasks SET deferred_by = now() + interval '10 minutes' WHERE id = '{}'", ids[0]))
        .await;
    let due = store::send_due_now(&client, slack, 10).await.unwrap();
    assert_eq!(due.iter().map(|m| m.task_id).collect::<Vec<_>>(), vec![ids[0]]);
    let (waiting, oldest) = store::batch_waiting(&client, "default", 100).await.unwrap();
    assert_eq!(waiting, 1);
    assert!(oldest.is_some());
    assert_eq!(
        store::send_profile_now(&client, "default", 10).await.unwrap().len(),
        1,
        "a profile that stopped batching"
    );
}

#[tokio::test]
async fn a_job_state_event_makes_its_open_batch_due_now_and_nothing_else() {
    const HOUR: Duration = Duration::from_secs(3600);
    let db = TestDb::new().await;
    let mut client = db.client().await;
    create_deferred(&db, 1, 2 * HOUR_MS).await;
    let Formed::Opened { batch_id, .. } =
        store::form_batch(&mut client, &group(1, Duration::ZERO, 1)).await.unwrap()
    else {
        panic!("opened")
    };
    let job = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc123";
    assert!(
        !store::look_at_batch_now(&client, job, HOUR).await.unwrap(),
        "not submitted yet: nothing named it"
    );
    assert_eq!(store::take_due_batches(&client, Duration::from_secs(600), 10).await.unwrap().len(), 1);
    assert!(store::mark_batch_submitted(&client, batch_id, job, HOUR).await.unwrap());
    assert!(
        store::take_due_batches(&client, Duration::from_secs(600), 10).await.unwrap().is_empty(),
        "polled in an hour"
    );
    assert!(!store::look_at_batch_now(
        &client,
        "arn:aws:bedrock:us-east-1:1:model-invocation-job/other",
        HOUR
    )
    .await
    .unwrap());
    assert!(
        store::take_due_batches(&client, Duration::from_secs(600), 10).await.unwrap().is_empty(),
        "another job's event changes nothing"
    );
    assert!(store::look_at_batch_now(&client, job, HOUR).await.unwrap());
    let due = store::take_due_batches(&client, Duration::from_secs(600), 10).await.unwrap();
    assert_eq!(due.iter().map(|b| b.id).collect::<Vec<_>>(), vec![batch_id], "due now, for this sweep");
    // Taken (held ten minutes by that batcher): a second event leaves it to the batcher.
    assert!(
        !store::look_at_batch_now(&client, job, Duration::from_secs(60)).await.unwrap(),
        "held by a batcher"
    );
    assert!(store::end_batch(&client, batch_id, store::BatchOutcome::Completed, None).await.unwrap());
    assert!(!store::look_at_batch_now(&client, job, HOUR).await.unwrap(), "an ended batch stays ended");
}
