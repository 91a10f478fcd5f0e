//! Batch hygiene (issue 36, items 3, 9 and 10), against the stub of OpenAI's and Anthropic's
//! batch APIs: a Message Batch whose create answered late is found at the provider, not made
//! again; extra batches made for one batch row are canceled and one adopted, but none when
//! another stack's batch matches too; a settled batch
//! leaves no file or batch at the provider; a batch's answer holding a NUL gets its one repair
//! turn on-demand, as an on-demand answer does.

use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-hygiene";

/// The `batchable` profile of `provider` on `batches`, a batch when 10 tasks wait.
fn models(provider: &str, batches: &StubBatches) -> Vec<(String, String)> {
    let models = json!({
        "batchable": {"provider": provider, "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY", "batch": {"maxRecords": 10, "maxWaitSeconds": 3600}}
    });
    vec![
        ("AITASK_MODELS".to_owned(), models.to_string()),
        ("BATCH_KEY".to_owned(), BATCH_STUB_KEY.to_owned()),
        ("AITASK_BATCH_POLL_MS".to_owned(), "100".to_owned()),
    ]
}

/// An app whose batch calls give up after a second, its queues and on-demand stub kept alive
/// with it.
struct Batcher {
    db: TestDb,
    app: aitasks_runtime::App,
    _queues: TestQueues,
    _stub: StubProvider,
}

async fn batcher(provider: &str, batches: &StubBatches) -> Batcher {
    let db = TestDb::new().await;
    let queues = TestQueues::create(3, 30).await;
    let stub = StubProvider::start().await;
    let env = models(provider, batches);
    let overrides: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut app = test_app(&db, &queues, &stub, &overrides);
    app.batches = aitasks_providers::BatchClient::new(Duration::from_secs(1)).unwrap();
    let client = db.client().await;
    for i in 0..10 {
        let mut task = new_task(APP, app_owner("nightly"), &format!("hygiene-{i}"));
        task.model_id = "batchable".to_owned();
        task.model_config_hash = Some(app.profiles.resolve("batchable").unwrap().config_hash());
        task.deferred_window_ms = Some(86_400_000);
        task.awaiting_batch = true;
        aitasks_store::create_task(&client, &task).await.unwrap();
    }
    Batcher { db, app, _queues: queues, _stub: stub }
}

/// Sweep (every open batch due at once) until `done` says so, for up to a minute. A clean-up is
/// due as soon as its batch ends; one that must wait is not hurried here.
async fn sweep_until(batcher: &Batcher, what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        aitasks_runtime::sweeper::sweep(&batcher.app).await;
        if done() {
            return;
        }
        assert!(Instant::now() < until, "{what}: not within a minute");
        batcher.db.sql("UPDATE task_batches SET due_at = now() WHERE state <> 'ended'").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn succeeded(db: &TestDb) -> i64 {
    db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'").await
}

#[tokio::test]
async fn an_anthropic_batch_whose_create_answered_late_is_found_and_not_made_again() {
    let batches = StubBatches::start().await;
    batches.hold();
    // The provider makes the batch, and answers after the batcher's call gave up.
    batches.answer_creates_late(1, Duration::from_secs(3));
    let batcher = batcher("anthropic", &batches).await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(batches.creates(), 1, "the first submit reached the provider");
    let submitting = batcher.db.count("SELECT count(*) FROM task_batches WHERE state = 'submitting'").await;
    assert_eq!(submitting, 1, "its answer was lost: the batch row is still submitting");
    // The next looks find it by the list (made since the first submit, ten requests) and adopt it.
    batches.release();
    let db = &batcher.db;
    let until = Instant::now() + Duration::from_secs(60);
    while succeeded(db).await < 10 {
        assert!(Instant::now() < until, "the batch settled");
        aitasks_runtime::sweeper::sweep(&batcher.app).await;
        db.sql("UPDATE task_batches SET due_at = now() WHERE state <> 'ended'").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(batches.creates(), 1, "not submitted again");
    assert_eq!(batches.cancels(), 0);
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 10, "one event each");
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE attempts = 1").await, 10, "none ran twice");
}

#[tokio::test]
async fn two_message_batches_made_for_one_row_the_oldest_is_adopted_and_the_other_canceled() {
    let batches = StubBatches::start().await;
    batches.hold();
    // Both creates are answered after the batcher gave up, and the second submit was sent
    // before the first batch showed in the list: two batches at the provider for one row.
    batches.answer_creates_late(2, Duration::from_secs(3));
    let batcher = batcher("anthropic", &batches).await;
    let db = &batcher.db;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    db.sql("UPDATE task_batches SET due_at = now()").await;
    // A lookup that found nothing (the list lagged): the next submit went out blind.
    let profile = batcher.app.profiles.resolve("batchable").unwrap().clone();
    let batch_id: uuid::Uuid =
        db.client().await.query_one("SELECT id FROM task_batches", &[]).await.unwrap().get(0);
    let tasks = aitasks_store::batch_tasks(&db.client().await, batch_id).await.unwrap();
    let requests: Vec<aitasks_contracts::AiRequest> = tasks
        .iter()
        .map(|t| aitasks_contracts::AiRequest::parse(&t.request, &aitasks_contracts::Path::root()).unwrap())
        .collect();
    let lines: Vec<aitasks_providers::BatchLine<'_>> = tasks
        .iter()
        .zip(&requests)
        .map(|(t, request)| aitasks_providers::BatchLine { task_id: t.lease.task_id, request })
        .collect();
    let second = batcher.app.batches.submit(&profile, batch_id, &lines).await;
    assert!(second.is_err(), "answered late too");
    db.sql("UPDATE task_batches SET submits = submits + 1").await;
    assert_eq!(batches.creates(), 2);
    assert_eq!(batches.anthropic_batches_held(), (2, 2));
    batches.release();
    sweep_until(&batcher, "both batches settled and deleted", || batches.anthropic_batches_held().0 == 0)
        .await;
    assert_eq!(succeeded(db).await, 10);
    assert_eq!(batches.creates(), 2, "no third");
    assert_eq!(batches.cancels(), 1, "the extra canceled");
    assert_eq!(batches.batch_deletes(), 2, "and both deleted once ended");
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 10, "one event each");
}

#[tokio::test]
async fn a_batch_the_lookup_did_not_see_yet_is_deleted_at_the_clean_up() {
    let batches = StubBatches::start().await;
    batches.hold();
    // The first create is answered after the batcher gave up, and the list shows a batch only
    // two seconds after it was made: the lookup before the second submit sees nothing.
    batches.answer_creates_late(1, Duration::from_secs(3));
    batches.lag_the_list(Duration::from_secs(2));
    let batcher = batcher("anthropic", &batches).await;
    let db = &batcher.db;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    db.sql("UPDATE task_batches SET due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(batches.creates(), 2, "the lookup saw nothing: sent again");
    assert_eq!(db.count("SELECT count(*) FROM task_batches WHERE state = 'submitted'").await, 1);
    wait_until("the lagging list to show both batches", || {
        std::future::ready(batches.anthropic_batches_listed() == 2)
    })
    .await;
    batches.release();
    // The first batch, found at the clean-up (made between the first submit and the answer
    // recorded, as many requests, not ours yet), is deleted with the one adopted.
    sweep_until(&batcher, "both batches deleted", || batches.batch_deletes() == 2).await;
    assert_eq!(succeeded(db).await, 10);
    assert_eq!(batches.anthropic_batches_held(), (0, 0), "nothing left at the provider");
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 10, "one event each");
    let extras = db.count("SELECT count(*) FROM task_batches WHERE cardinality(extra_batch_ids) = 1").await;
    assert_eq!(extras, 1, "recorded as the row's extra");
}

#[tokio::test]
async fn a_lookup_that_also_matches_another_stack_s_batch_adopts_and_cancels_nothing() {
    let batches = StubBatches::start().await;
    batches.hold();
    batches.answer_creates_late(1, Duration::from_secs(3));
    let batcher = batcher("anthropic", &batches).await;
    let db = &batcher.db;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    // Another stack on the same key made a batch of as many requests at the same time.
    let foreign = batches.foreign_anthropic_batch(10);
    db.sql("UPDATE task_batches SET due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!((batches.creates(), batches.cancels()), (1, 0), "neither sent again nor anything canceled");
    let waiting = db
        .count("SELECT count(*) FROM task_batches WHERE state = 'submitting' AND last_error LIKE '%another stack%'")
        .await;
    assert_eq!(waiting, 1, "unsure: the row waits, saying why");
    // At its give-up time it goes back whole; the other stack's batch is left alone.
    db.sql("UPDATE task_batches SET give_up_at = now() - interval '1 second', due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(db.count("SELECT count(*) FROM task_batches WHERE outcome = 'unsubmitted'").await, 1);
    assert_eq!(
        db.count("SELECT count(*) FROM tasks WHERE status = 'queued' AND attempts = 0 AND batch_id IS NULL")
            .await,
        10,
        "its tasks on-demand, uncounted"
    );
    assert_eq!((batches.cancels(), batches.batch_deletes()), (0, 0), "{foreign} untouched");
}

#[tokio::test]
async fn a_settled_openai_batch_leaves_no_file_at_the_provider() {
    let batches = StubBatches::start().await;
    let batcher = batcher("openai", &batches).await;
    let db = &batcher.db;
    sweep_until(&batcher, "the batch settled and its files deleted", || {
        batches.files_held() == 0 && batches.uploads() == 1
    })
    .await;
    assert_eq!(succeeded(db).await, 10);
    assert_eq!(batches.file_deletes(), 2, "its input and its output file");
    let left = db.count("SELECT count(*) FROM task_batches WHERE cleanup_due_at IS NOT NULL").await;
    assert_eq!(left, 0, "nothing left to clean up");
}

#[tokio::test]
async fn a_given_up_message_batch_is_deleted_once_its_cancel_ends() {
    let batches = StubBatches::start().await;
    batches.hold();
    let batcher = batcher("anthropic", &batches).await;
    let db = &batcher.db;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(batches.anthropic_batches_held(), (1, 1));
    db.sql("UPDATE task_batches SET give_up_at = now() - interval '1 second', due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(batches.cancels(), 1, "given up: canceled at the provider");
    // Its grace: the batcher waits for the answers given before the cancel, so the batch has
    // not ended here yet.
    assert_eq!(db.count("SELECT count(*) FROM task_batches WHERE outcome IS NULL").await, 1);
    // The grace passes with the provider still canceling: the batch ends given up here, and
    // the clean-up finds it not deletable yet, and does not forget it.
    db.sql("UPDATE task_batches SET give_up_at = now() - interval '1 hour', due_at = now() WHERE outcome IS NULL")
        .await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(db.count("SELECT count(*) FROM task_batches WHERE outcome = 'given_up'").await, 1);
    db.sql("UPDATE task_batches SET cleanup_due_at = now() WHERE cleanup_due_at IS NOT NULL").await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(batches.batch_deletes(), 0, "not deleted while it is still canceling");
    assert_eq!(db.count("SELECT count(*) FROM task_batches WHERE cleanup_due_at IS NOT NULL").await, 1);
    batches.advance();
    db.sql("UPDATE task_batches SET cleanup_due_at = now() WHERE cleanup_due_at IS NOT NULL").await;
    aitasks_runtime::sweeper::sweep(&batcher.app).await;
    assert_eq!(batches.batch_deletes(), 1, "deleted once its cancel ended");
    assert_eq!(batches.anthropic_batches_held(), (0, 0));
}

#[tokio::test]
async fn a_batch_answer_holding_a_nul_gets_its_one_repair_turn_on_demand() {
    let batches = StubBatches::start().await;
    let env = models("openai", &batches);
    let overrides: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let stack = Stack::start_with(&overrides).await;
    let api = stack.api(APP);
    let items: Vec<Value> = (0..10)
        .map(|i| {
            json!({"owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": format!("nul-{i}"),
                   "modelId": "batchable", "delivery": {"deferred": {"within": "PT24H"}},
                   "request": {"kind": "classify", "prompt": "Route the ticket.", "input": format!("t{i}"),
                               "choices": ["billing", "bug", "other"]}})
        })
        .collect();
    let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
    assert_eq!(status, 200, "{answer}");
    let first = answer["results"][0]["task"]["id"].as_str().unwrap().to_owned();
    batches.script(&first, LineScript::InvalidWithNul);
    let until = Instant::now() + Duration::from_secs(90);
    while stack.db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'").await < 10 {
        assert!(Instant::now() < until, "every task succeeded");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let repaired = api.get(&format!("/v1/tasks/{first}")).await.1;
    assert_eq!(repaired["usage"]["calls"], 2, "the batch's answer and one repair turn: {repaired}");
    assert_eq!(repaired["attempts"], 1, "the repair is the same attempt, not a new one");
    assert_eq!(batches.on_demand_calls(), 1);
    let said = batches.on_demand_requests()[0]["messages"].to_string();
    assert!(said.contains("That answer was not valid"), "the repair turn states the problems: {said}");
}
