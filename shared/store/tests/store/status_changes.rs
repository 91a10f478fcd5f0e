//! What follows a change of a task's status, written by the one trigger on `tasks`
//! (migrations/V38) whatever statement makes the change: a bare UPDATE that ends a task gets
//! its event, its callbacks owed, its step freed and its count lowered exactly as the store's
//! own statements do; a deleted active task lowers its count; a task in a provider batch has a
//! lease of its own, which the stale-running sweep honours.

use std::time::Duration;

use aitasks_store::{self as store, AdmissionBudget, BatchGroup, Formed, ScopedAdmission, TaskStatus};
use aitasks_testkit::*;
use uuid::Uuid;

fn admission(step: &str) -> ScopedAdmission {
    ScopedAdmission {
        source_id: "src".to_owned(),
        cache_key: format!("{:0>64}", step.bytes().map(|b| format!("{b:02x}")).collect::<String>()),
        recompute: false,
        budget: AdmissionBudget { scope_concurrent: 10, ..ROOMY_BUDGET },
        limits: aitasks_store::ServerLimits::default(),
    }
}

async fn scoped_task(db: &TestDb, key: &str) -> Uuid {
    let mut client = db.client().await;
    let created = store::create_scoped(&mut client, &new_task(APP, app_owner("s"), key), &admission(key))
        .await
        .unwrap();
    created.created.task().id
}

async fn count(db: &TestDb, sql: &str) -> i64 {
    db.client().await.query_one(sql, &[]).await.unwrap().get(0)
}

async fn active(db: &TestDb) -> i64 {
    count(db, &format!("SELECT COALESCE(sum(active), 0)::bigint FROM app_concurrency WHERE app_id = '{APP}'"))
        .await
}

#[tokio::test]
async fn a_bare_update_that_ends_a_scoped_task_writes_everything_that_follows_once() {
    let db = TestDb::new().await;
    let task = scoped_task(&db, "one").await;
    let other = scoped_task(&db, "two").await;
    let kept = scoped_task(&db, "three").await;
    assert_eq!(active(&db).await, 3);
    db.sql(&format!(
        "INSERT INTO task_callbacks (task_id, app_id, kind, token, token_hash, state) \
         SELECT id, app_id, 'step_functions', 't', sha256('t'::bytea), 'waiting' FROM tasks WHERE id = '{task}'"
    ))
    .await;

    // No statement of the store: the trigger alone writes what follows.
    db.sql(&format!(
        "UPDATE tasks SET status = 'failed', error_code = 'X', completed_at = now() WHERE id = '{task}'"
    ))
    .await;
    assert_eq!(count(&db, &format!("SELECT count(*) FROM task_events WHERE task_id = '{task}'")).await, 1);
    let event: i64 = count(&db, &format!("SELECT ended_event_id FROM tasks WHERE id = '{task}'")).await;
    assert_eq!(
        count(
            &db,
            &format!("SELECT count(*) FROM task_events WHERE id = {event} AND payload->>'status' = 'failed'")
        )
        .await,
        1
    );
    assert_eq!(
        count(
            &db,
            &format!("SELECT count(*) FROM task_callbacks WHERE task_id = '{task}' AND state = 'owed'")
        )
        .await,
        1
    );
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM scope_admissions WHERE task_id = '{task}' AND logical_key IS NULL"
            )
        )
        .await,
        1,
        "a failure frees its step"
    );
    assert_eq!(active(&db).await, 2);

    // A change that is no ending (a terminal task touched again) writes nothing more.
    db.sql(&format!("UPDATE tasks SET status = 'failed', error_message = 'again' WHERE id = '{task}'")).await;
    assert_eq!(count(&db, &format!("SELECT count(*) FROM task_events WHERE task_id = '{task}'")).await, 1);
    assert_eq!(active(&db).await, 2);

    // A deleted active scoped task lowers the count; a deleted ended one does not (`kept` stays
    // active and counted).
    db.sql(&format!("DELETE FROM tasks WHERE id IN ('{task}', '{other}')")).await;
    assert_eq!(active(&db).await, 1);
    assert_eq!(
        count(&db, &format!("SELECT count(*) FROM tasks WHERE id = '{kept}' AND status = 'queued'")).await,
        1
    );
}

#[tokio::test]
async fn a_task_in_a_batch_has_its_own_lease_and_is_taken_back_only_once_it_passes() {
    let db = TestDb::new().await;
    let mut client = db.client().await;
    for key in ["b1", "b2"] {
        let mut task = new_task(APP, app_owner("s"), key);
        task.deferred_window_ms = Some(2 * 3_600_000);
        task.awaiting_batch = true;
        store::create_task(&client, &task).await.unwrap();
    }
    let group = BatchGroup {
        profile: "default",
        provider: "openai",
        max_records: 2,
        max_bytes: 50_000_000,
        max_wait: Duration::from_secs(3600),
        min_records: 1,
        slack: Duration::from_secs(1800),
    };
    let Formed::Opened { batch_id, .. } = store::form_batch(&mut client, &group).await.unwrap() else {
        panic!("a full group opens a batch")
    };
    let in_batch = store::batch_tasks(&client, batch_id).await.unwrap();
    let (first, second) = (in_batch[0].lease.task_id, in_batch[1].lease.task_id);
    assert_eq!(
        count(&db, "SELECT count(*) FROM tasks WHERE heartbeat_at IS NULL AND batch_lease_until > now() + interval '1 hour'").await,
        2,
        "no heartbeat: a lease past the batch's give-up time"
    );
    assert!(crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await.requeued.is_empty());

    db.sql(&format!("UPDATE tasks SET batch_lease_until = now() - interval '1 second' WHERE id = '{first}'"))
        .await;
    let taken = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert_eq!(taken.requeued.iter().map(|t| t.id).collect::<Vec<_>>(), vec![first]);
    let back = &taken.requeued[0];
    assert_eq!((back.status, back.attempts, back.heartbeat_at), (TaskStatus::Queued, 1, None));
    assert_eq!(back.error_code.as_deref(), Some("WORKFLOW_AI_INTERRUPTED"));
    let stayed = store::get_task(&client, APP, second).await.unwrap().unwrap();
    assert_eq!(stayed.status, TaskStatus::Running, "the other's lease has not passed");
    // Its batch's late answer for the task taken back is fenced out.
    assert_eq!(
        store::complete_attempt(&client, in_batch[0].lease, &serde_json::json!("late"), None, false)
            .await
            .unwrap(),
        store::Fenced::Lost
    );
}
