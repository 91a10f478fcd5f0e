//! Deferred tasks through the dev server and a stub of OpenAI's Files + Batches API: a thousand
//! tasks in two batches settle exactly once each; a batch that expires sends its tasks on-demand
//! and they succeed within their window; an answer that fails the checks is repaired on-demand in
//! one call; a cancel during a batch ends the task at once and its late result is discarded; a
//! batcher that died between the provider's answer and its commit neither loses the batch nor
//! submits it twice; a profile without a batch API runs a deferred task now.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-deferred";

/// The environment of a stack whose `batchable` profile batches through `batches`.
fn batch_env(batches: &StubBatches, max_records: u32, max_wait_seconds: u32) -> Vec<(String, String)> {
    let models = json!({
        "batchable": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY",
                      "prices": {"inputPerMillion": 0.2, "outputPerMillion": 0.8},
                      "batch": {"maxRecords": max_records, "maxWaitSeconds": max_wait_seconds,
                                "prices": {"inputPerMillion": 0.1, "outputPerMillion": 0.4}}}
    });
    vec![
        ("AITASK_MODELS".to_owned(), models.to_string()),
        ("BATCH_KEY".to_owned(), BATCH_STUB_KEY.to_owned()),
        ("AITASK_BATCH_POLL_MS".to_owned(), "200".to_owned()),
    ]
}

async fn start(batches: &StubBatches, max_records: u32, max_wait_seconds: u32) -> Stack {
    let env = batch_env(batches, max_records, max_wait_seconds);
    let overrides: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Stack::start_with(&overrides).await
}

fn deferred_item(key: &str) -> Value {
    json!({"owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": key, "modelId": "batchable",
           "delivery": {"deferred": {"within": "PT24H"}},
           "request": {"kind": "classify", "prompt": "Route the ticket.", "input": key,
                       "choices": ["billing", "bug", "other"]}})
}

/// Wait until `query` (a count) reaches `expected`.
async fn wait_count(db: &TestDb, query: &str, expected: i64, timeout: Duration) {
    let until = Instant::now() + timeout;
    loop {
        let count = db.count(query).await;
        if count == expected {
            return;
        }
        assert!(Instant::now() < until, "{query}: {count}, not {expected}, after {timeout:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn create_deferred(api: &Api, keys: impl Iterator<Item = String>) -> Vec<String> {
    let items: Vec<Value> = keys.map(|key| deferred_item(&key)).collect();
    let mut ids = Vec::new();
    for chunk in items.chunks(500) {
        let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": chunk})).await;
        assert_eq!(status, 200, "{answer}");
        for result in answer["results"].as_array().expect("results") {
            assert_eq!(result["status"], 201, "{result}");
            ids.push(result["task"]["id"].as_str().expect("id").to_owned());
        }
    }
    ids
}

#[tokio::test]
async fn a_thousand_deferred_tasks_in_two_batches_settle_exactly_once_each() {
    let batches = StubBatches::start().await;
    let stack = start(&batches, 500, 3600).await;
    let api = stack.api(APP);
    stack.db.reset_statements().await;
    let started = Instant::now();
    let ids = create_deferred(&api, (0..1000).map(|i| format!("ticket-{i}"))).await;
    wait_count(
        &stack.db,
        "SELECT count(*) FROM tasks WHERE status = 'succeeded'",
        1000,
        Duration::from_secs(120),
    )
    .await;
    // The store's work for a deferred task (BENCHMARKS.md): every statement the database took,
    // the dev server's other sweep duties (every 500 ms) included.
    let statements = stack.db.statements_seen().await;
    let (batch_calls, _) = stack.db.statement_calls("task_batches").await;
    println!(
        "deferred: 1000 tasks in {:.1}s, {statements} statements ({:.2} a task; {batch_calls} of them on task_batches)",
        started.elapsed().as_secs_f64(),
        statements as f64 / 1000.0
    );
    assert_eq!(batches.creates(), 2, "two full batches of 500");
    let lines = batches.submitted_lines();
    let custom_ids: BTreeSet<&str> = lines.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!((lines.len(), custom_ids.len()), (1000, 1000), "each task in one line");
    assert_eq!(lines[0].1["model"], "stub-batch-model", "the chat request the on-demand path sends");
    assert!(lines[0].1["response_format"]["json_schema"]["strict"] == true);
    assert_eq!(stack.stub.requests().len(), 0, "nothing ran on-demand");
    assert_eq!(
        stack.db.count("SELECT count(*) FROM (SELECT task_id FROM task_events GROUP BY task_id HAVING count(*) = 1) once").await,
        1000,
        "exactly one completion event each"
    );
    let task = api.get(&format!("/v1/tasks/{}", ids[0])).await.1;
    assert_eq!(task["attempts"], 1);
    assert!(task["deferredBy"].is_string());
    let cost = task["usage"]["estimatedCostUsd"].as_f64().expect("priced at the batch prices");
    let (input, output) =
        (task["usage"]["inputTokens"].as_f64().unwrap(), task["usage"]["outputTokens"].as_f64().unwrap());
    assert!((cost - (input * 0.1 + output * 0.4) / 1e6).abs() < 1e-12, "{task}");
    // A batch ends once its results are settled, in the look that follows them.
    wait_count(
        &stack.db,
        "SELECT count(*) FROM task_batches WHERE outcome = 'completed'",
        2,
        Duration::from_secs(30),
    )
    .await;
}

#[tokio::test]
async fn an_expired_batch_sends_its_tasks_on_demand_and_they_succeed_within_their_window() {
    let batches = StubBatches::start().await;
    batches.set_outcome(BatchOutcome::Expire);
    let stack = start(&batches, 20, 3600).await;
    let api = stack.api(APP);
    create_deferred(&api, (0..20).map(|i| format!("late-{i}"))).await;
    wait_count(
        &stack.db,
        "SELECT count(*) FROM tasks WHERE status = 'succeeded'",
        20,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(batches.creates(), 1);
    assert_eq!(batches.on_demand_calls(), 20, "each ran on-demand once");
    assert_eq!(
        stack.db.count("SELECT count(*) FROM tasks WHERE completed_at < deferred_by AND attempts = 1").await,
        20
    );
    assert_eq!(stack.db.count("SELECT count(*) FROM task_batches WHERE outcome = 'expired'").await, 1);
}

#[tokio::test]
async fn an_answer_that_fails_the_checks_is_repaired_on_demand_in_one_call() {
    let batches = StubBatches::start().await;
    let stack = start(&batches, 5, 3600).await;
    let api = stack.api(APP);
    let first = create_deferred(&api, (0..4).map(|i| format!("repair-{i}"))).await;
    batches.script(&first[1], LineScript::Invalid);
    create_deferred(&api, std::iter::once("repair-4".to_owned())).await;
    wait_count(
        &stack.db,
        "SELECT count(*) FROM tasks WHERE status = 'succeeded'",
        5,
        Duration::from_secs(60),
    )
    .await;
    let repaired = api.get(&format!("/v1/tasks/{}", first[1])).await.1;
    assert_eq!(repaired["usage"]["calls"], 2, "the batch's answer and one repair turn: {repaired}");
    assert_eq!(repaired["attempts"], 1, "the repair is the same attempt");
    assert_eq!(batches.on_demand_calls(), 1);
    let repair = &batches.on_demand_requests()[0];
    let said = repair["messages"].to_string();
    assert!(said.contains("That answer was not valid"), "the repair turn states the problems: {said}");
}

#[tokio::test]
async fn a_repair_turn_outlives_an_attempt_given_back_unworked() {
    let batches = StubBatches::start().await;
    let mut env = batch_env(&batches, 2, 3600);
    // One concurrency slot, held by someone else for now: the repair's first attempt finds the
    // profile at its limit and gives the task back unworked, its attempt uncounted.
    let mut models: Value = serde_json::from_str(&env[0].1).unwrap();
    models["batchable"]["limits"] = json!({"concurrent": 1});
    env[0].1 = models.to_string();
    let overrides: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let stack = Stack::start_with(&overrides).await;
    stack
        .db
        .sql("INSERT INTO provider_slots (profile_id, slot, held_until) VALUES ('batchable', 1, now() + interval '1 hour')")
        .await;
    let api = stack.api(APP);
    let first = create_deferred(&api, std::iter::once("unworked-0".to_owned())).await;
    batches.script(&first[0], LineScript::Invalid);
    create_deferred(&api, std::iter::once("unworked-1".to_owned())).await;
    // Claimed on-demand for its repair, and given back unworked.
    wait_count(
        &stack.db,
        &format!(
            "SELECT count(*) FROM tasks WHERE id = '{}' AND status = 'queued' AND claim_token IS NOT NULL",
            first[0]
        ),
        1,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(batches.on_demand_calls(), 0, "no call went out");
    stack.db.sql("UPDATE provider_slots SET held_until = '-infinity'").await;
    wait_count(
        &stack.db,
        "SELECT count(*) FROM tasks WHERE status = 'succeeded'",
        2,
        Duration::from_secs(60),
    )
    .await;
    let repaired = api.get(&format!("/v1/tasks/{}", first[0])).await.1;
    assert_eq!(repaired["usage"]["calls"], 2, "the batch's answer and its repair turn, kept: {repaired}");
    assert_eq!(repaired["attempts"], 1);
    assert_eq!(batches.on_demand_calls(), 1);
    let said = batches.on_demand_requests()[0]["messages"].to_string();
    assert!(said.contains("That answer was not valid"), "the repair turn, not a fresh start: {said}");
    assert_eq!(stack.db.count("SELECT count(*) FROM task_repairs").await, 0, "taken once it worked");
}

#[tokio::test]
async fn a_cancel_during_a_batch_ends_the_task_at_once_and_its_result_is_discarded() {
    let batches = StubBatches::start().await;
    batches.hold();
    let stack = start(&batches, 3, 3600).await;
    let api = stack.api(APP);
    let ids = create_deferred(&api, (0..3).map(|i| format!("cancel-{i}"))).await;
    wait_count(
        &stack.db,
        "SELECT count(*) FROM tasks WHERE status = 'running' AND batch_id IS NOT NULL",
        3,
        Duration::from_secs(30),
    )
    .await;
    wait_count(
        &stack.db,
        "SELECT count(*) FROM task_batches WHERE state = 'submitted'",
        1,
        Duration::from_secs(30),
    )
    .await;
    let (status, canceled) = api.post(&format!("/v1/tasks/{}/cancel", ids[0]), &json!({})).await;
    assert_eq!(status, 200, "{canceled}");
    assert_eq!(canceled["status"], "canceled", "at once: no worker watches a batch's task");
    batches.release();
    batches.advance();
    wait_count(
        &stack.db,
        "SELECT count(*) FROM tasks WHERE status = 'succeeded'",
        2,
        Duration::from_secs(60),
    )
    .await;
    let task = api.get(&format!("/v1/tasks/{}", ids[0])).await.1;
    assert_eq!((task["status"].as_str(), task["output"].is_null()), (Some("canceled"), true), "{task}");
    let events =
        stack.db.count(&format!("SELECT count(*) FROM task_events WHERE task_id = '{}'", ids[0])).await;
    assert_eq!(events, 1, "one completion event, the cancel's");
}

/// Ten deferred tasks in a batch the provider took, its answer never committed (the batcher
/// killed between the two): what the next sweeps find `submitting`. The queues and the on-demand
/// stub are kept alive with the app that points at them.
struct Unrecorded {
    db: TestDb,
    batches: StubBatches,
    app: aitasks_runtime::App,
    _queues: TestQueues,
    _stub: StubProvider,
}

async fn a_batch_submitted_but_not_recorded() -> Unrecorded {
    let db = TestDb::new().await;
    let queues = TestQueues::create(3, 30).await;
    let stub = StubProvider::start().await;
    let batches = StubBatches::start().await;
    let env = batch_env(&batches, 10, 3600);
    let overrides: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let app = test_app(&db, &queues, &stub, &overrides);
    let client = db.client().await;
    for i in 0..10 {
        let mut task = new_task(APP, app_owner("nightly"), &format!("crash-{i}"));
        task.model_id = "batchable".to_owned();
        task.model_config_hash = Some(app.profiles.resolve("batchable").unwrap().config_hash());
        task.deferred_window_ms = Some(86_400_000);
        task.awaiting_batch = true;
        aitasks_store::create_task(&client, &task).await.unwrap();
    }
    // The batcher's first sweep: the batch recorded, then the provider's answer never committed.
    let mut owned = db.client().await;
    let group = aitasks_store::BatchGroup {
        profile: "batchable",
        provider: "openai",
        max_records: 10,
        max_bytes: 50_000_000,
        max_wait: Duration::from_secs(3600),
        min_records: 1,
        slack: Duration::from_secs(1800),
    };
    let aitasks_store::Formed::Opened { batch_id, .. } =
        aitasks_store::form_batch(&mut owned, &group).await.unwrap()
    else {
        panic!("a full group opens a batch")
    };
    let tasks = aitasks_store::batch_tasks(&client, batch_id).await.unwrap();
    let requests: Vec<aitasks_contracts::AiRequest> = tasks
        .iter()
        .map(|t| aitasks_contracts::AiRequest::parse(&t.request, &aitasks_contracts::Path::root()).unwrap())
        .collect();
    let lines: Vec<aitasks_providers::BatchLine<'_>> = tasks
        .iter()
        .zip(&requests)
        .map(|(t, request)| aitasks_providers::BatchLine { task_id: t.lease.task_id, request })
        .collect();
    let profile = app.profiles.resolve("batchable").unwrap();
    app.batches.submit(profile, batch_id, &lines).await.expect("the provider took the batch");
    assert_eq!(batches.creates(), 1);
    Unrecorded { db, batches, app, _queues: queues, _stub: stub }
}

#[tokio::test]
async fn a_batcher_killed_between_the_provider_s_answer_and_its_commit_submits_the_batch_once() {
    // Bound whole: the queues and the stub it keeps must live as long as the app.
    let unrecorded = a_batch_submitted_but_not_recorded().await;
    let Unrecorded { db, batches, app, .. } = &unrecorded;
    // The next sweeps find it `submitting`, submit it again (the provider's batch is found by its
    // metadata), poll it and settle it.
    let until = Instant::now() + Duration::from_secs(60);
    while db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'").await < 10 {
        assert!(Instant::now() < until, "the batch settled");
        aitasks_runtime::sweeper::sweep(app).await;
        db.sql("UPDATE task_batches SET due_at = now()").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(batches.creates(), 1, "not submitted twice");
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 10, "one event each");
}

#[tokio::test]
async fn a_batch_given_up_while_submitting_is_found_at_the_provider_and_cancelled_there() {
    // Bound whole: the queues and the stub it keeps must live as long as the app.
    let unrecorded = a_batch_submitted_but_not_recorded().await;
    let Unrecorded { db, batches, app, .. } = &unrecorded;
    batches.hold();
    // Its tasks' windows came near their end before any batcher recorded the provider's answer,
    // longer ago than the grace its partial results are waited for.
    db.sql("UPDATE task_batches SET give_up_at = now() - interval '1 hour', due_at = now()").await;
    aitasks_runtime::sweeper::sweep(app).await;
    assert_eq!(batches.creates(), 1, "not submitted again");
    assert_eq!(batches.cancels(), 1, "the provider's batch, found by its metadata, cancelled there");
    assert_eq!(db.count("SELECT count(*) FROM task_batches WHERE outcome = 'given_up'").await, 1);
    assert_eq!(
        db.count("SELECT count(*) FROM tasks WHERE status = 'queued' AND attempts = 0 AND batch_id IS NULL")
            .await,
        10,
        "its tasks on-demand, uncounted"
    );
}

#[tokio::test]
async fn a_profile_without_a_batch_api_runs_a_deferred_task_now() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let mut item = deferred_item("now-1");
    item["modelId"] = json!("default");
    let (status, task) = api.post("/v1/tasks", &item).await;
    assert_eq!(status, 201, "{task}");
    assert!(task["deferredBy"].is_string());
    let id = task["id"].as_str().unwrap();
    let done = api.wait_terminal(id).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(stack.stub.requests().len(), 1, "on-demand, at once");
}

#[tokio::test]
async fn a_window_outside_the_batch_window_is_a_clear_400_and_stores_nothing() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    for within in ["PT25H", "PT1H", "tomorrow", "PT2H30M"] {
        let mut item = deferred_item(&format!("bad-{within}"));
        item["modelId"] = json!("default");
        item["delivery"] = json!({"deferred": {"within": within}});
        let (status, answer) = api.post("/v1/tasks", &item).await;
        assert_eq!(status, 400, "{within}: {answer}");
        assert_eq!(answer["error"]["code"], "INVALID_REQUEST");
        assert_eq!(answer["error"]["details"][0]["path"], "delivery.deferred.within", "{answer}");
    }
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 0);
}
