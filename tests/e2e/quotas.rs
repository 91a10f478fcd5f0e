//! Server-side quotas per tenant (`AITASK_TENANT_QUOTAS`): configuration, not the caller's
//! budget, so an application cannot create without limit by leaving out `scope`.

use aitasks_testkit::*;
use serde_json::{json, Value};

fn unscoped(effect_key: &str) -> Value {
    json!({
        "owner": {"scopeId": "workspace-1"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
    })
}

fn scoped(effect_key: &str) -> Value {
    let mut body = unscoped(effect_key);
    body["scope"] = json!({"sourceId": effect_key, "sourceRevision": "r1",
        "budget": {"burst": 100, "tasksPerMinute": 100, "maxStepsPerSource": 100, "sourcesPer24Hours": 100,
                   "scopeConcurrent": 100, "globalConcurrent": 100}});
    body
}

#[tokio::test]
async fn a_tenant_quota_counts_every_new_task_and_nothing_else() {
    let quotas = r#"{"*": {"tasksPerDay": 3}, "app-big": {"tasksPerDay": 10}}"#;
    let stack = Stack::start_with(&[("AITASK_TENANT_QUOTAS", quotas)]).await;
    let api = stack.api("app-small");
    assert_eq!(api.post("/v1/tasks", &unscoped("a")).await.0, 201);
    assert_eq!(api.post("/v1/tasks", &scoped("b")).await.0, 201, "scoped creates count too");
    assert_eq!(api.post("/v1/tasks", &unscoped("c")).await.0, 201);
    assert_eq!(api.post("/v1/tasks", &unscoped("a")).await.0, 200, "an existing effect key spends nothing");

    let refused =
        api.send(reqwest::Method::POST, "/v1/tasks", Some(unscoped("d").to_string().into_bytes())).await;
    assert_eq!(
        (refused.status, refused.body["error"]["code"].as_str()),
        (429, Some("WORKFLOW_AI_TENANT_QUOTA"))
    );
    let retry_after: u64 =
        refused.headers.get("retry-after").expect("Retry-After").to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry_after), "until the next UTC day: {retry_after}");
    let refused =
        api.send(reqwest::Method::POST, "/v1/tasks", Some(scoped("e").to_string().into_bytes())).await;
    assert_eq!(refused.body["error"]["code"], "WORKFLOW_AI_TENANT_QUOTA", "scoped or not");
    assert_eq!(api.post("/v1/tasks", &unscoped("c")).await.0, 200, "existing keys still answer when spent");
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks WHERE app_id = 'app-small'").await, 3);

    // Each tenant has its own count, and a named tenant its own quota.
    let big = stack.api("app-big");
    for i in 0..10 {
        assert_eq!(big.post("/v1/tasks", &unscoped(&format!("k{i}"))).await.0, 201);
    }
    assert_eq!(big.post("/v1/tasks", &unscoped("k10")).await.0, 429);
    let other = stack.api("app-other");
    assert_eq!(other.post("/v1/tasks", &unscoped("a")).await.0, 201, "the default applies per tenant");

    // A new UTC day starts a new count.
    stack.db.sql("UPDATE tenant_usage SET day = day - 1").await;
    assert_eq!(api.post("/v1/tasks", &unscoped("d")).await.0, 201);
}
