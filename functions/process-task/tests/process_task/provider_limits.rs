//! Provider-side limits held in Postgres, so every worker instance respects one limit: many
//! instances (each its own App and pool, as Lambda runs them) against one profile limited to
//! 3 concurrent calls never put more than 3 calls in flight at the provider; a worker that
//! finds the limit reached gives the task back unworked, its attempt not counted, in a fresh
//! delayed message (its delivery is acknowledged, so give-backs never reach the dead-letter
//! queue). An attempt that made a call counts whatever the rest of its chain does, a task the
//! limits keep waiting still ends at its queue timeout, and a tenant flooding a limited profile
//! cannot starve another's task.

use std::time::Duration;

use crate::common::*;
use aitasks_runtime::App;
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
            assert!(
                response.unwrap().batch_item_failures.is_empty(),
                "a give-back acknowledges its delivery"
            );
        }
        throttled += queued(&db).await.len();
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
        .query_one("SELECT count(*) FROM provider_slots WHERE held_until > now()", &[])
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
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    assert_eq!(
        app.queues.task_queue_depth().await.unwrap(),
        3,
        "three come back for the next minute, in fresh messages"
    );
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

/// Deliver every queued task to `app`, flood first: the tasks of `last` reach the worker a little
/// after the others, so without a line they would lose every race for a free slot.
async fn deliver_round(db: &TestDb, app: &App<PanicsOnRequest>, last: &str) {
    let waiting = queued_of_all(db).await;
    let (late, early): (Vec<&Task>, Vec<&Task>) = waiting.iter().partition(|t| t.app_id == last);
    let early_runs =
        early.chunks(5).map(|batch| process_task::handle(app, event(batch, Duration::from_secs(60))));
    let late_run = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        if !late.is_empty() {
            process_task::handle(app, event(&late, Duration::from_secs(60))).await.unwrap();
        }
    };
    let (responses, ()) = tokio::join!(futures::future::join_all(early_runs), late_run);
    for response in responses {
        response.unwrap();
    }
}

/// Every queued task of every tenant.
async fn queued_of_all(db: &TestDb) -> Vec<Task> {
    let client = db.client().await;
    let rows = client
        .query("SELECT id, app_id FROM tasks WHERE status = 'queued' ORDER BY created_at", &[])
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for row in rows {
        let (id, app_id): (uuid::Uuid, String) = (row.get(0), row.get(1));
        tasks.push(aitasks_store::get_task(&client, &app_id, id).await.unwrap().unwrap());
    }
    tasks
}

#[tokio::test]
async fn a_tenant_flooding_a_limited_profile_cannot_starve_another_tenant() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_millis(150)));
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"concurrent": 1}}}).to_string();
    let app = app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str())]).await;
    for n in 0..30 {
        task(&db, &format!("flood-{n}"), "Sentiment?", 3).await;
    }
    let mut quiet = new_task("quiet-app", app_owner("q"), "quiet-1");
    quiet.max_attempts = 3;
    let quiet = aitasks_store::create_task(&db.client().await, &quiet).await.unwrap().into_task();
    let mut rounds = 0;
    loop {
        rounds += 1;
        deliver_round(&db, &app, "quiet-app").await;
        let status =
            aitasks_store::get_task(&db.client().await, "quiet-app", quiet.id).await.unwrap().unwrap().status;
        if status.is_terminal() {
            assert_eq!(status, aitasks_store::TaskStatus::Succeeded);
            break;
        }
        assert!(rounds < 4, "the quiet tenant's task waited {rounds} rounds behind the flood");
    }
    let flood_done =
        db.count("SELECT count(*) FROM tasks WHERE app_id = 'app-1' AND status = 'succeeded'").await;
    println!("the quiet task succeeded in round {rounds}, with {flood_done} of the flood's 30 done");
    assert!(flood_done < 30, "it did not wait for the flood to drain");
}

#[tokio::test]
async fn an_attempt_that_called_a_profile_counts_even_when_its_fallback_is_at_its_limit() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let failing = StubProvider::start().await;
    failing.set_default(Reply::status(503));
    let limited = StubProvider::start().await;
    let models = json!({
        "default": {"model": "a", "baseUrl": failing.base_url, "fallbacks": ["b"]},
        "b": {"model": "b", "baseUrl": limited.base_url, "limits": {"concurrent": 1}},
    })
    .to_string();
    let app = app(&db, &queues, &failing, &[("AITASK_MODELS", models.as_str())]).await;
    // The fallback's one slot is held by someone else for the whole test.
    let client = db.client().await;
    let held = aitasks_store::SlotToTake {
        profile_id: "b",
        app_id: "someone-else",
        slots: 1,
        lease: Duration::from_secs(600),
        holder: uuid::Uuid::new_v4(),
    };
    assert!(aitasks_store::take_slot(&client, &held).await.unwrap().is_some());
    let task = task(&db, "chain", "Sentiment?", 3).await;
    for delivery in 0.. {
        assert!(delivery < 10, "the task was given back again and again");
        process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
        let now = aitasks_store::get_task(&client, APP, task.id).await.unwrap().unwrap();
        if now.status.is_terminal() {
            assert_eq!(now.status, aitasks_store::TaskStatus::Failed);
            assert_eq!(now.error_code.as_deref(), Some("WORKFLOW_AI_PROVIDER_ERROR"));
            assert_eq!(now.attempts, 3, "every attempt that called the first profile counted");
            break;
        }
    }
    assert_eq!(failing.calls(), 3, "exactly one call to the failing profile an attempt");
    assert_eq!(limited.calls(), 0, "the limited fallback was never called");
}

#[tokio::test]
async fn a_task_the_limits_keep_waiting_fails_at_its_queue_timeout_since_creation() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"concurrent": 1}}}).to_string();
    let app =
        app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str()), ("AITASK_QUEUE_TIMEOUT_MS", "60000")])
            .await;
    let client = db.client().await;
    let held = aitasks_store::SlotToTake {
        profile_id: "default",
        app_id: "someone-else",
        slots: 1,
        lease: Duration::from_secs(600),
        holder: uuid::Uuid::new_v4(),
    };
    assert!(aitasks_store::take_slot(&client, &held).await.unwrap().is_some());
    let task = task(&db, "waits", "Sentiment?", 3).await;
    process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    let given_back = aitasks_store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!((given_back.status, given_back.attempts), (aitasks_store::TaskStatus::Queued, 0));
    // Two minutes later (the give-back touched updated_at; the creation is what counts).
    db.sql(&format!(
        "UPDATE tasks SET created_at = created_at - interval '2 minutes' WHERE id = '{}'",
        task.id
    ))
    .await;
    process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    let ended = aitasks_store::get_task(&client, APP, task.id).await.unwrap().unwrap();
    assert_eq!(ended.status, aitasks_store::TaskStatus::Failed);
    assert_eq!(ended.error_code.as_deref(), Some("WORKFLOW_AI_QUEUE_TIMEOUT"));
    assert_eq!(stub.calls(), 0);
}
