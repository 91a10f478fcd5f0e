//! Outputs are bounded where they are made, before the store: a provider that ignores
//! `max_tokens` and answers the largest answer the schema allows ends that task failed with
//! `AI_OUTPUT_TOO_LARGE` (not retried), its GET answer stays under Lambda's 6 MB, and a
//! neighbour in the same invocation (the same group commit) succeeds on its first attempt.

use std::time::Duration;

use aitasks_contracts::{response_body_bytes, AppId, OUTPUT_MAX_BYTES};
use aitasks_runtime::answers::TaskAnswer;
use aitasks_store::{Created, Task};
use aitasks_testkit::*;
use serde_json::json;

use crate::common::*;

/// Lambda refuses a response over 6 MB.
const LAMBDA_RESPONSE_MAX_BYTES: usize = 6_000_000;

/// An `extract_data` task of 100 text fields of 20,000 characters each: within every request
/// limit, its largest schema-valid answer is 2,000,000 characters.
async fn widest_extract(db: &TestDb, key: &str) -> Task {
    let fields: Vec<_> = (0..100)
        .map(|i| json!({"name": format!("f{i}"), "type": "text", "description": "a passage", "required": true, "maxLength": 20_000}))
        .collect();
    let mut new = new_task(APP, app_owner("s"), key);
    new.kind = "extract_data".into();
    new.request =
        json!({"kind": "extract_data", "prompt": "Extract.", "input": {"doc": "d"}, "fields": fields});
    new.input_hash = hash_of(&new.request);
    created(db, new).await
}

async fn created(db: &TestDb, new: aitasks_store::NewTask) -> Task {
    match aitasks_store::create_task(&db.client().await, &new).await.unwrap() {
        Created::New(task) => task,
        Created::Existing(_) => unreachable!("fresh key"),
    }
}

#[tokio::test]
async fn an_oversized_output_fails_its_own_task_and_its_answer_stays_under_6_mb() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    // Every free text at its maxLength of quotes: each counts twice in JSON and twice again in
    // Lambda's response, so the wide task's output would take about 8 MB there.
    stub.set_default(Reply::Filled { fill: '"', chars: 20_000 });
    let wide = widest_extract(&db, "wide").await;
    // A classify: its answer is one of its choices, whatever the provider fills texts with.
    let neighbour = task(&db, "neighbour", "Sentiment?", 3).await;

    let response =
        process_task::handle(&app, event(&[&wide, &neighbour], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);

    let tenant = AppId::parse(APP).unwrap();
    let read = |task: &Task| {
        let id = task.id.to_string();
        let (app, tenant) = (&app, &tenant);
        async move { aitasks_runtime::api::get_task(app, tenant, &id, Duration::ZERO).await.unwrap() }
    };
    let wide = read(&wide).await;
    let answer_bytes = response_body_bytes(&TaskAnswer::from(&wide));
    println!("wide task: {:?} {:?}, GET answer {answer_bytes} bytes", wide.status, wide.error_code);
    assert_eq!(
        (wide.status.as_str(), wide.error_code.as_deref(), wide.attempts),
        ("failed", Some("AI_OUTPUT_TOO_LARGE"), 1),
        "the oversized output fails its task, once, with the documented code"
    );
    assert!(wide.output.is_none());
    assert!(answer_bytes < LAMBDA_RESPONSE_MAX_BYTES, "GET answer of {answer_bytes} bytes");
    assert_eq!(stub.calls(), 2, "no repair turn, no retry: one call each");

    let neighbour = read(&neighbour).await;
    assert_eq!(
        (neighbour.status.as_str(), neighbour.attempts),
        ("succeeded", 1),
        "the neighbour is untouched"
    );

    // An output at the bound itself is stored. A string's two quotes take two bytes each in an
    // answer (`\"`), so N - 4 letters take exactly N bytes.
    let at_bound = json!("x".repeat(OUTPUT_MAX_BYTES - 4));
    assert_eq!(aitasks_contracts::oversized_output(&at_bound), None);
    let over = json!("x".repeat(OUTPUT_MAX_BYTES - 3));
    assert_eq!(aitasks_contracts::oversized_output(&over), Some(OUTPUT_MAX_BYTES + 1));
}
