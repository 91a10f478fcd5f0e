//! Provider-side limits held in Postgres, so every worker instance respects one limit: many
//! instances (each its own App and pool, as Lambda runs them) against one profile limited to
//! 3 concurrent calls never put more than 3 calls in flight at the provider; a worker that
//! finds the limit reached gives the task back unworked, its attempt not counted.

use std::time::Duration;

use crate::common::*;
use aitasks_store::Task;
use aitasks_testkit::*;
use serde_json::json;

async fn queued(db: &TestDb) -> Vec<Task> {
    let client = db.client().await;
    let rows =
        client.query("SELECT id FROM tasks WHERE status = 'queued' ORDER BY created_at", &[]).await.unwrap();
    let mut tasks = Vec::new();
    for row in rows {
        let id: uuid::Uuid = row.get(0);
        tasks.push(aitasks_store::get_task(&client, APP, id).await.unwrap().unwrap());
    }
    tasks
}

#[tokio::test]
async fn many_instances_never_exceed_a_profile_s_concurrent_calls() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_millis(300)));
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"concurrent": 3}}}).to_string();
    let overrides = [("AITASK_MODELS", models.as_str()), ("AITASK_MAX_ATTEMPTS", "1")];
    let mut instances = Vec::new();
    for _ in 0..4 {
        instances.push(app(&db, &queues, &stub, &overrides).await);
    }
    for n in 0..24 {
        task(&db, &format!("t{n}"), "Sentiment?", 1).await;
    }
    // Deliver every queued task, a batch of up to 6 to each instance at once, until none is left
    // (a throttled task's message comes back: here, at the next round).
    let mut throttled = 0;
    for round in 0.. {
        let waiting = queued(&db).await;
        if waiting.is_empty() {
            break;
        }
        assert!(round < 40, "{} tasks still queued", waiting.len());
        let batches: Vec<Vec<&Task>> = waiting.chunks(6).map(|c| c.iter().collect()).collect();
        let runs = batches
            .iter()
            .zip(instances.iter().cycle())
            .map(|(batch, app)| process_task::handle(app, event(batch, Duration::from_secs(60))));
        for response in futures::future::join_all(runs).await {
            throttled += response.unwrap().batch_item_failures.len();
        }
    }
    assert!(stub.peak_in_flight() <= 3, "the provider saw {} calls at once", stub.peak_in_flight());
    assert!(
        stub.peak_in_flight() >= 2,
        "calls overlapped, so the limit was tested: {}",
        stub.peak_in_flight()
    );
    assert!(throttled > 0, "some workers found the limit reached");
    assert_eq!(stub.calls(), 24, "one call per task: a throttled worker made none");
    let client = db.client().await;
    let row = client
        .query_one("SELECT count(*) FILTER (WHERE status = 'succeeded'), max(attempts) FROM tasks", &[])
        .await
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i32>(1)), (24, 1), "every task, on its one attempt");
    let busy: i64 = client
        .query_one("SELECT count(*) FROM provider_slots WHERE lease_until > now()", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(busy, 0, "every slot was given back");
}

#[tokio::test]
async fn a_requests_per_minute_limit_gives_the_rest_back_unworked() {
    // Not across a minute boundary, where a new window opens.
    let second = chrono::Timelike::second(&chrono::Utc::now());
    if second > 50 {
        tokio::time::sleep(Duration::from_secs(u64::from(61 - second))).await;
    }
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"requestsPerMinute": 2}}})
            .to_string();
    let app = app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str())]).await;
    let mut tasks = Vec::new();
    for n in 0..5 {
        tasks.push(task(&db, &format!("t{n}"), "Sentiment?", 3).await);
    }
    let response =
        process_task::handle(&app, event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60)))
            .await
            .unwrap();
    assert_eq!(response.batch_item_failures.len(), 3, "three come back for the next minute");
    assert_eq!(stub.calls(), 2);
    let row = db
        .client()
        .await
        .query_one(
            "SELECT count(*) FILTER (WHERE status = 'succeeded'), \
                    count(*) FILTER (WHERE status = 'queued' AND attempts = 0 AND error_code IS NULL) FROM tasks",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, i64>(0), row.get::<_, i64>(1)),
        (2, 3),
        "the throttled ones: queued, no attempt spent"
    );
}
