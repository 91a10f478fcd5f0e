//! A batch of records through process-task: one statement claims them all, successes that
//! finish together are settled together, and every guarantee of the single path holds: a
//! duplicate record claims nothing, a cancel still stops its own task in flight, each task
//! settles once with one event.

use std::time::{Duration, Instant};

use crate::common::*;
use aitasks_testkit::*;

#[tokio::test]
async fn ten_records_cost_about_one_round_trip_each_step() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    // Warm every pooled connection's statement cache with a full batch first.
    let mut warm = Vec::new();
    for i in 0..10 {
        warm.push(task(&db, &format!("warm-{i}"), "Sentiment?", 3).await);
    }
    process_task::handle(&app, event(&warm.iter().collect::<Vec<_>>(), Duration::from_secs(60)))
        .await
        .unwrap();

    let mut tasks = Vec::new();
    for i in 0..10 {
        tasks.push(task(&db, &format!("t-{i}"), "Sentiment?", 3).await);
    }
    db.reset_statements().await;
    let response =
        process_task::handle(&app, event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60)))
            .await
            .unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let total = db.statements_seen().await;
    let (claims, claimed) = db.statement_calls("started_at = COALESCE(started_at, now())").await;
    let (completes, completed) = db.statement_calls("AS settled_attempt").await;
    let (marks, _) = db.statement_calls("UPDATE task_events SET delivered_at").await;
    println!(
        "a batch of 10: {total} statements ({:.2} a task): claim {claims}, complete {completes}, mark delivered {marks}",
        total as f64 / 10.0
    );
    assert_eq!((claims, claimed), (1, 10), "one statement claims the ten");
    assert_eq!(completed, 10, "ten completed");
    assert!(completes <= 10, "a statement completes one group");
    assert_eq!(marks, 0, "the events were handed over: written delivered, no mark after the publish");
    assert_eq!(
        db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded' AND effect_key LIKE 't-%'").await,
        10
    );
    assert_eq!(
        db.count("SELECT count(*) FROM task_events e JOIN tasks t ON t.id = e.task_id WHERE t.effect_key LIKE 't-%' AND e.delivered_at IS NOT NULL").await,
        10,
        "each with one event, published"
    );
}

#[tokio::test]
async fn a_duplicate_record_claims_nothing_and_a_cancel_still_stops_its_task() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_secs(3)));
    let app = app(&db, &queues, &stub, &[("AITASK_CANCEL_POLL_MS", "100")]).await;
    let tasks: Vec<_> = {
        let mut tasks = Vec::new();
        for i in 0..5 {
            tasks.push(task(&db, &format!("t-{i}"), "Sentiment?", 3).await);
        }
        tasks
    };
    // The first task's message came twice in the same batch.
    let records: Vec<_> = std::iter::once(&tasks[0]).chain(tasks.iter()).collect();
    let canceled = tasks[2].id;
    let canceler = {
        let pool = db.pool.clone();
        tokio::spawn(async move {
            // Once its attempt runs (its 3 s call under way).
            let client = aitasks_store::client(&pool).await.unwrap();
            wait_until("the task to be canceled to run", || async {
                let row =
                    client.query_one("SELECT status FROM tasks WHERE id = $1", &[&canceled]).await.unwrap();
                row.get::<_, String>(0) == "running"
            })
            .await;
            let started = Instant::now();
            aitasks_store::request_cancel(&client, APP, canceled).await.unwrap();
            started
        })
    };
    let started = Instant::now();
    let response = process_task::handle(&app, event(&records, Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty());
    let _ = canceler.await.unwrap();
    println!("the batch took {:?}", started.elapsed());
    let statuses = db
        .client()
        .await
        .query("SELECT effect_key, status, attempts FROM tasks ORDER BY effect_key", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get::<_, String>(0), row.get::<_, String>(1), row.get::<_, i32>(2)))
        .collect::<Vec<_>>();
    let expected: Vec<(String, String, i32)> = (0..5)
        .map(|i| (format!("t-{i}"), if i == 2 { "canceled" } else { "succeeded" }.to_owned(), 1))
        .collect();
    assert_eq!(statuses, expected, "one attempt each; the duplicate claimed nothing");
    assert_eq!(stub.calls(), 5, "one call a task");
    assert_eq!(stub.aborted(), 1, "the canceled task's call was aborted in flight");
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 5, "one event a task");
}
