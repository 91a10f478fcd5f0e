//! Issue 36: nothing bounded the callbacks a task or a tenant could have waiting, so one batch of
//! a thousand items with one effect key and a thousand tokens attached a thousand callbacks, and
//! a tenant could wait on more than the sweeper can heartbeat. Past `AITASK_CALLBACKS_PER_TASK`
//! or `AITASK_TENANT_WAITING_CALLBACKS` the item is refused with 429 and stores nothing.

use aitasks_contracts::AppId;
use aitasks_runtime::api;
use aitasks_testkit::*;
use serde_json::{json, Value};

fn create(effect_key: &str, token: &str) -> Value {
    json!({"owner": {"scopeId": "docs"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
           "callback": {"stepFunctions": {"taskToken": token}}})
}

#[tokio::test]
async fn one_effect_key_takes_callbacks_up_to_the_task_limit_in_a_batch() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(&db, &queues, &stub, &[]);
    let tenant = AppId::parse(APP).unwrap();
    let items: Vec<Value> = (0..30).map(|i| create("one-key", &format!("token-{i}"))).collect();
    let body = json!({"tasks": items}).to_string();

    let answers = api::create_many(&app, &tenant, body.as_bytes()).await.unwrap();
    let refused: Vec<(u16, &str)> =
        answers.iter().filter_map(|a| a.as_ref().err()).map(|e| (e.status(), e.code().as_str())).collect();
    let attached = db.count("SELECT count(*) FROM task_callbacks").await;
    println!(
        "30 tokens on one effect key: {attached} callbacks attached, {} items refused {:?}",
        refused.len(),
        refused.first()
    );
    assert_eq!(attached, 25, "AITASK_CALLBACKS_PER_TASK (25) on the one task");
    assert_eq!(refused.len(), 5);
    assert!(refused.iter().all(|r| *r == (429, "WORKFLOW_AI_TASK_CALLBACKS")), "{refused:?}");
    assert!(answers[..25].iter().all(Result::is_ok), "the first 25 items are answered as before");

    // The same batch again: every token is on the task already, so the first 25 add nothing
    // and still fit; the last 5 are still refused.
    let again = api::create_many(&app, &tenant, body.as_bytes()).await.unwrap();
    assert_eq!(again.iter().filter(|a| a.is_ok()).count(), 25);
    assert_eq!(db.count("SELECT count(*) FROM task_callbacks").await, 25);
}

#[tokio::test]
async fn a_tenant_past_its_waiting_callbacks_is_refused_and_nothing_is_stored() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(&db, &queues, &stub, &[("AITASK_TENANT_WAITING_CALLBACKS", "3")]);
    let tenant = AppId::parse(APP).unwrap();
    let mut answers = Vec::new();
    for i in 0..5 {
        let body = create(&format!("key-{i}"), &format!("token-{i}")).to_string();
        answers.push(
            api::create_task(&app, &tenant, body.as_bytes())
                .await
                .map_err(|e| (e.status(), e.code().as_str())),
        );
    }
    let tasks = db.count("SELECT count(*) FROM tasks").await;
    println!(
        "5 creates with callbacks, a limit of 3: {tasks} tasks stored, answers {:?}",
        answers.iter().map(|a| a.as_ref().err()).collect::<Vec<_>>()
    );
    assert!(answers[..3].iter().all(Result::is_ok));
    assert_eq!(answers[3].as_ref().err(), Some(&(429, "WORKFLOW_AI_TENANT_CALLBACKS")));
    assert_eq!(answers[4].as_ref().err(), Some(&(429, "WORKFLOW_AI_TENANT_CALLBACKS")));
    assert_eq!(tasks, 3, "a refused create stores no task");
    // Another tenant has its own count; a create without a callback is not limited.
    let other = AppId::parse("app-2").unwrap();
    let body = create("key-0", "token-other").to_string();
    assert!(api::create_task(&app, &other, body.as_bytes()).await.is_ok());
    let mut plain = create("key-plain", "x");
    plain.as_object_mut().unwrap().remove("callback");
    assert!(api::create_task(&app, &tenant, plain.to_string().as_bytes()).await.is_ok());
}
