//! One task's bad data never costs a neighbour anything, even when they share a statement: the
//! successes of an invocation are completed by one group statement, and a success the store could
//! not hold (a model's answer with a NUL in it; any row the database refuses) must leave the
//! others' settlements, on their first attempt, untouched.

use std::time::Duration;

use aitasks_store::{Created, Task};
use aitasks_testkit::*;
use serde_json::json;

use crate::common::*;

async fn text_task(db: &TestDb, key: &str, max_attempts: i32) -> Task {
    let mut new = new_task(APP, app_owner("s"), key);
    new.kind = "generate_text".into();
    new.request = json!({"kind": "generate_text", "prompt": "Say hello.", "maxOutputChars": 4000});
    new.input_hash = hash_of(&new.request);
    new.max_attempts = max_attempts;
    match aitasks_store::create_task(&db.client().await, &new).await.unwrap() {
        Created::New(task) => task,
        Created::Existing(_) => unreachable!("fresh key"),
    }
}

/// What a completion's statement says, alone or for a group (settle/complete_*.sql).
const COMPLETION: &str = "SET status = 'succeeded'";

/// Hold the tasks' rows once every one is claimed, until the six answers are in and a
/// completion waits on the held rows: the batch's first group statement, for the one success
/// that came back at once, waits, and the other five arrive meanwhile and are written together
/// in the next group. (Held before the claim, the rows would be skipped by it and their
/// records given back: what a fixed pause before the hold did on a loaded machine.)
async fn hold_rows(db: &TestDb, tasks: &[Task], stub: &StubProvider) {
    wait_until("every task claimed", || async {
        db.count("SELECT count(*) FROM tasks WHERE status = 'queued'").await == 0
    })
    .await;
    let ids: Vec<uuid::Uuid> = tasks.iter().map(|t| t.id).collect();
    let mut client = db.client().await;
    let transaction = client.transaction().await.unwrap();
    transaction
        .execute("SELECT 1 FROM tasks WHERE id = ANY($1) ORDER BY id FOR UPDATE", &[&ids])
        .await
        .unwrap();
    wait_until("the six answers in, and a completion waiting on the held rows", || async {
        stub.completed() >= tasks.len()
            && (db.lock_waits(COMPLETION).await >= 1
                || db.count("SELECT count(*) FROM tasks WHERE status = 'running'").await == 0)
    })
    .await;
    transaction.rollback().await.unwrap();
}

async fn settled(db: &TestDb, task: &Task) -> (String, i32, Option<serde_json::Value>) {
    let row = db
        .client()
        .await
        .query_one("SELECT status, attempts, usage FROM tasks WHERE id = $1", &[&task.id])
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

#[tokio::test]
async fn a_nul_in_one_answer_costs_its_five_neighbours_nothing() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let mut tasks = Vec::new();
    for i in 0..6 {
        tasks.push(text_task(&db, &format!("t-{i}"), 3).await);
    }
    // The first call is answered at once; the five others, one of them with a NUL inside its
    // text, answer together while the first one's group waits on the held rows.
    stub.script([
        Reply::Auto,
        Reply::Slow(Duration::from_millis(300), Box::new(Reply::Answer(json!({"text": "a\u{0}b"})))),
    ]);
    stub.set_default(Reply::slow(Duration::from_millis(300)));
    let event = event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60));
    let (response, ()) = tokio::join!(process_task::handle(&app, event), hold_rows(&db, &tasks, &stub));
    let response = response.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let mut repaired = 0;
    for task in &tasks {
        let (status, attempts, usage) = settled(&db, task).await;
        assert_eq!((status.as_str(), attempts), ("succeeded", 1), "{}", task.effect_key);
        if usage.as_ref().and_then(|u| u["calls"].as_u64()) == Some(2) {
            repaired += 1;
        }
    }
    assert_eq!(repaired, 1, "the answer with a NUL was refused and repaired within its attempt");
    let stored = db.count("SELECT count(*) FROM tasks WHERE output::text LIKE '%\\u0000%'").await;
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn rows_the_database_refuses_fail_alone_and_their_group_settles_one_by_one() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let mut tasks = Vec::new();
    // Two rows the database refuses (the first group holds one success, so at least one of
    // them shares the second group with neighbours). One attempt each: their end is final.
    let refused = [2, 3];
    for i in 0..6 {
        tasks.push(text_task(&db, &format!("t-{i}"), if refused.contains(&i) { 1 } else { 3 }).await);
    }
    db.sql_as_owner(&format!(
        "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           RAISE EXCEPTION 'this row cannot be stored'; END $$; \
         CREATE TRIGGER refuse_row BEFORE UPDATE ON tasks FOR EACH ROW \
           WHEN (NEW.status = 'succeeded' AND NEW.id IN ('{}', '{}')) EXECUTE FUNCTION refuse_row();",
        tasks[2].id, tasks[3].id
    ))
    .await;
    stub.script([Reply::Auto]);
    stub.set_default(Reply::slow(Duration::from_millis(300)));
    let event = event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60));
    let (response, ()) = tokio::join!(process_task::handle(&app, event), hold_rows(&db, &tasks, &stub));
    let response = response.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    for (i, task) in tasks.iter().enumerate() {
        let (status, attempts, _) = settled(&db, task).await;
        if refused.contains(&i) {
            assert_eq!((status.as_str(), attempts), ("failed", 1), "a refused row fails alone");
            let code: Option<String> = db
                .client()
                .await
                .query_one("SELECT error_code FROM tasks WHERE id = $1", &[&task.id])
                .await
                .unwrap()
                .get(0);
            assert_eq!(code.as_deref(), Some("WORKFLOW_AI_RUNTIME_ERROR"));
        } else {
            assert_eq!((status.as_str(), attempts), ("succeeded", 1), "{}", task.effect_key);
        }
    }
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 6, "one event each");
}
