//! A task runs with the model configuration it was created with, or not at all: when its
//! profile changed in between (`AITASK_MODELS` redeployed), the worker fails it with
//! `AI_MODEL_CONFIG_CHANGED` before any provider call, so no answer is stored, or cached,
//! under a configuration that did not produce it.

use std::time::Duration;

use crate::common::*;
use aitasks_store::Created;
use aitasks_testkit::*;

#[tokio::test]
async fn a_task_whose_profile_changed_since_its_create_fails_without_a_call() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, &[]).await;
    let current = app.profiles.resolve("default").unwrap().config_hash();
    let create = |key: &str, hash: Option<String>| {
        let mut new = new_task(APP, app_owner("s"), key);
        new.model_config_hash = hash;
        let db = &db;
        async move {
            match aitasks_store::create_task(&db.client().await, &new).await.unwrap() {
                Created::New(task) => task,
                Created::Existing(_) => unreachable!("fresh key"),
            }
        }
    };
    let changed = create("changed", Some(hash_of(&serde_json::json!("the profile as it was")))).await;
    let same = create("same", Some(current)).await;

    let response =
        process_task::handle(&app, event(&[&changed, &same], Duration::from_secs(60))).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "both settled: nothing to retry");
    let row = |id| {
        let db = &db;
        async move {
            let row = db
                .client()
                .await
                .query_one(
                    "SELECT status, error_code, error_message, output FROM tasks WHERE id = $1",
                    &[&id],
                )
                .await
                .unwrap();
            (
                row.get::<_, String>(0),
                row.get::<_, Option<String>>(1),
                row.get::<_, Option<String>>(2),
                row.get::<_, Option<serde_json::Value>>(3),
            )
        }
    };
    let (status, code, message, output) = row(changed.id).await;
    assert_eq!((status.as_str(), code.as_deref()), ("failed", Some("AI_MODEL_CONFIG_CHANGED")));
    assert!(message.unwrap_or_default().contains("create the task again"));
    assert_eq!(output, None);
    assert_eq!(row(same.id).await.0, "succeeded", "the unchanged profile runs");
    assert_eq!(stub.calls(), 1, "the changed task never reached the provider");
}
