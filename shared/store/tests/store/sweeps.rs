//! The sweeper's housekeeping and the migrations against a real Postgres: owed messages split
//! between concurrent sweepers, the event outbox leased, delivered and pruned, admission history
//! pruned in batches, migrators racing. (The sweeps that settle tasks are in lifecycle.rs.)

use std::sync::Arc;
use std::time::Duration;

use aitasks_store::{self as store, Claim};
use aitasks_testkit::*;
use futures::future::join_all;

#[tokio::test]
async fn unsent_messages_wait_out_the_grace_then_are_split_between_sweepers() {
    let db = Arc::new(TestDb::new().await);
    let client = db.client().await;
    let mut ids = Vec::new();
    for i in 0..30 {
        let created =
            store::create_task(&client, &new_task(APP, app_owner("s"), &format!("k{i}"))).await.unwrap();
        ids.push(created.task().id);
    }
    let grace = Duration::from_secs(5);
    let resend = Duration::from_secs(300);
    assert!(
        store::take_unsent(&client, grace, resend, 100).await.unwrap().is_empty(),
        "inserted marked sent"
    );
    // Their creates' sends failed: owed again, after the grace.
    assert_eq!(store::mark_unsent(&client, &ids).await.unwrap(), 30);
    assert!(store::take_unsent(&client, grace, resend, 100).await.unwrap().is_empty(), "inside the grace");
    db.sql("UPDATE tasks SET created_at = now() - interval '1 minute'").await;
    let sweeps = (0..3).map(|_| {
        let db = db.clone();
        async move { store::take_unsent(&db.client().await, grace, resend, 10).await.unwrap() }
    });
    let mut all: Vec<_> =
        join_all(sweeps).await.into_iter().flatten().map(|message| message.task_id).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 30, "three sweepers of 10 take all 30, none twice");
    // A failed send gives them back; a message sent long ago counts as lost.
    assert_eq!(store::mark_unsent(&client, &all[..5]).await.unwrap(), 5);
    assert_eq!(store::take_unsent(&client, grace, resend, 100).await.unwrap().len(), 5);
    db.sql("UPDATE tasks SET message_sent_at = now() - interval '10 minutes'").await;
    assert_eq!(store::take_unsent(&client, grace, resend, 100).await.unwrap().len(), 30);
}

/// A send that failed at the client may still have reached the queue, and its claim may have
/// parked the task under a hold before the failure is marked: the mark leaves it parked (its
/// hold's release sends it), and no sweep re-sends it.
#[tokio::test]
async fn a_failed_send_marked_after_the_task_was_parked_leaves_it_parked() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "parked")).await.unwrap();
    let id = task.task().id;
    db.sql(&format!("UPDATE tasks SET message_sent_at = 'infinity' WHERE id = '{id}'")).await;
    assert_eq!(store::mark_unsent(&client, &[id]).await.unwrap(), 0);
    db.sql("UPDATE tasks SET created_at = now() - interval '1 hour'").await;
    let owed =
        store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(300), 100).await.unwrap();
    assert!(owed.is_empty(), "a parked task owes no message: {owed:?}");
    let parked = db
        .count(&format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND message_sent_at = 'infinity'"))
        .await;
    assert_eq!(parked, 1);
}

/// A create's send that failed at the client may still have reached the queue: a worker claimed
/// the task and gave it back with a delay before the create owes it again. The create's mark
/// leaves it alone (only a task as its insert left it is owed again), so the give-back's delayed
/// message is the one that runs it.
#[tokio::test]
async fn a_create_owing_its_task_again_after_a_worker_gave_it_back_leaves_it_alone() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "gb")).await.unwrap().into_task();
    let Claim::Claimed(running) = claim_one(&client, task.id).await else { panic!("claimed") };
    assert!(store::give_back(&client, running.lease()).await.unwrap());
    assert_eq!(store::owe_again(&client, &[task.id]).await.unwrap(), 0);
    db.sql("UPDATE tasks SET created_at = now() - interval '1 minute'").await;
    let owed =
        store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(300), 100).await.unwrap();
    assert!(owed.is_empty(), "the give-back's delayed message is in the queue: {owed:?}");
    // Untouched since its insert, a task is owed again.
    let fresh =
        store::create_task(&client, &new_task(APP, app_owner("s"), "fresh")).await.unwrap().into_task();
    assert_eq!(store::owe_again(&client, &[fresh.id]).await.unwrap(), 1);
}

#[tokio::test]
async fn events_are_leased_delivered_and_pruned() {
    let db = TestDb::new().await;
    let client = db.client().await;
    for i in 0..3 {
        let task =
            store::create_task(&client, &new_task(APP, app_owner("s"), &format!("k{i}"))).await.unwrap();
        store::request_cancel(&client, APP, task.task().id).await.unwrap();
    }
    let lease = Duration::from_secs(60);
    assert!(
        store::take_undelivered_events(&client, lease, 10).await.unwrap().is_empty(),
        "the inline publisher's grace"
    );
    db.sql("UPDATE task_events SET available_at = now() - interval '1 second'").await;
    let events = store::take_undelivered_events(&client, lease, 10).await.unwrap();
    assert_eq!(events.len(), 3);
    assert!(
        store::take_undelivered_events(&client, lease, 10).await.unwrap().is_empty(),
        "leased events are hidden"
    );
    let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
    assert_eq!(store::mark_delivered(&client, &ids[..2]).await.unwrap(), 2);
    db.sql("UPDATE task_events SET available_at = now() - interval '1 second'").await;
    let again = store::take_undelivered_events(&client, lease, 10).await.unwrap();
    assert_eq!(again.iter().map(|e| e.id).collect::<Vec<_>>(), vec![ids[2]], "undelivered events come back");
    db.sql("UPDATE task_events SET delivered_at = now() - interval '2 days' WHERE delivered_at IS NOT NULL")
        .await;
    assert_eq!(store::prune_delivered_events(&client, Duration::from_secs(86_400), 100).await.unwrap(), 2);
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 1);
}

#[tokio::test]
async fn old_admission_history_is_pruned_in_batches() {
    let db = TestDb::new().await;
    db.sql(
        "INSERT INTO scope_admissions (task_id, app_id, scope_id, source_id, logical_key, created_at) \
         SELECT gen_random_uuid(), 'app-1', 's', 'src', 'k', now() - interval '25 hours' FROM generate_series(1, 150); \
         INSERT INTO scope_admissions (task_id, app_id, scope_id, source_id, logical_key) \
         SELECT gen_random_uuid(), 'app-1', 's', 'src', 'k' FROM generate_series(1, 7)",
    )
    .await;
    let client = db.client().await;
    assert_eq!(store::prune_admissions(&client, Duration::from_secs(86_400), 100).await.unwrap(), 100);
    assert_eq!(store::prune_admissions(&client, Duration::from_secs(86_400), 100).await.unwrap(), 50);
    assert_eq!(store::prune_admissions(&client, Duration::from_secs(86_400), 100).await.unwrap(), 0);
    assert_eq!(db.count("SELECT count(*) FROM scope_admissions").await, 7);
}

#[tokio::test]
async fn migrations_are_idempotent_under_concurrent_migrators() {
    let base = base_url();
    let name = format!("aitasks_migrate_{}", uuid::Uuid::new_v4().simple());
    admin(&with_database(&base, "postgres"))
        .await
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let url = with_database(&base, &name);
    let ca = ca_file();
    let runs = join_all((0..4).map(|_| store::migrate_with(&url, ca.as_deref()))).await;
    let applied: Vec<Vec<u32>> = runs.into_iter().map(|r| r.expect("every migrator succeeds")).collect();
    assert_eq!(
        applied.iter().filter(|a| !a.is_empty()).count(),
        1,
        "one migrator applies, the rest find nothing"
    );
    assert!(
        store::migrate_with(&url, ca_file().as_deref()).await.unwrap().is_empty(),
        "a later run applies nothing"
    );
    let client = admin(&url).await;
    let tables: i64 = client
        .query_one("SELECT count(*) FROM pg_tables WHERE tablename IN ('runs','tasks','task_events','scope_budgets','scope_admissions')", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 5);
}

/// The store knows when the queue lost messages: it owes more (sent over `older_than` ago, not
/// yet claimed) than the queue holds. The look costs at most `in_queue + 1` entries, and a restore
/// re-sends exactly what was sent before it, each once, whatever restores run beside it.
#[tokio::test]
async fn owed_messages_beyond_the_queue_s_count_are_claimed_once_for_a_resend() {
    let db = Arc::new(TestDb::new().await);
    let client = db.client().await;
    for i in 0..25 {
        store::create_task(&client, &new_task(APP, app_owner("s"), &format!("k{i}"))).await.unwrap();
    }
    let minute = Duration::from_secs(60);
    assert_eq!(store::owed_beyond(&client, 0, minute).await.unwrap(), None, "nothing sent yet: nothing owed");
    db.sql("UPDATE tasks SET message_sent_at = now() - interval '5 minutes'").await;
    assert_eq!(store::owed_beyond(&client, 25, minute).await.unwrap(), None, "the queue holds them all");
    assert_eq!(store::owed_beyond(&client, 0, Duration::from_secs(600)).await.unwrap(), None, "too recent");
    let cutoff = store::owed_beyond(&client, 3, minute).await.unwrap().expect("the queue lost some");

    let restores = (0..3).map(|_| {
        let db = db.clone();
        async move {
            let client = db.client().await;
            let mut mine = Vec::new();
            loop {
                let batch = store::take_lost(&client, cutoff, 4).await.unwrap();
                assert!(batch.iter().all(|message| message.app_id == APP), "each with its application");
                let done = batch.len() < 4;
                mine.extend(batch.into_iter().map(|message| message.task_id));
                if done {
                    return mine;
                }
            }
        }
    });
    let mut all: Vec<_> = join_all(restores).await.into_iter().flatten().collect();
    let claimed = all.len();
    all.sort();
    all.dedup();
    assert_eq!((claimed, all.len()), (25, 25), "every owed message once");
    assert!(
        store::take_lost(&client, cutoff, 100).await.unwrap().is_empty(),
        "re-sent ones are not owed again"
    );
    assert_eq!(store::owed_beyond(&client, 0, minute).await.unwrap(), None, "just sent: the queue has them");
}
