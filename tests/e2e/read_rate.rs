//! Each tenant's read rate (docs/api.md, "Read rate"): a tenant whose reads pass
//! `AITASK_READ_RATE` is refused 429 `WORKFLOW_AI_READ_RATE` with `Retry-After`, whatever instance
//! it asks (the wide reads spend from a bucket in Postgres that every instance shares), while
//! another tenant reads on and writes are not charged.

use aitasks_testkit::*;
use reqwest::Method;
use serde_json::{json, Value};

const READER: &str = "app-reader";
const OTHER: &str = "app-other";

fn task(effect_key: &str) -> Value {
    json!({"owner": {"scopeId": "reads"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"},
                       "choices": ["pos", "neg"]}})
}

/// The answer's `Retry-After`, in whole seconds.
fn retry_after(answer: &Answer) -> u64 {
    answer.header("retry-after").expect("Retry-After").parse().expect("whole seconds")
}

#[tokio::test]
async fn a_tenant_over_its_read_rate_is_refused_with_retry_after_and_another_reads_on() {
    // Two wide reads' worth at once, then one unit a second.
    let stack = Stack::start_with(&[("AITASK_READ_RATE", "1"), ("AITASK_READ_BURST", "2000")]).await;
    let reader = stack.api(READER);
    let (status, created) = reader.post("/v1/tasks", &task("one")).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();

    for _ in 0..2 {
        let (status, summary) = reader.get("/v1/summary").await;
        assert_eq!(status, 200, "{summary}");
    }
    let refused = reader.send(Method::GET, "/v1/summary", None).await;
    assert_eq!(
        (refused.status, refused.body["error"]["code"].as_str()),
        (429, Some("WORKFLOW_AI_READ_RATE"))
    );
    let wait = retry_after(&refused);
    assert!((990..=1_000).contains(&wait), "1,000 units at one a second: {wait}");
    assert!(
        refused.body["error"]["message"].as_str().unwrap().contains("AITASK_READ_RATE"),
        "{}",
        refused.body
    );
    // Every read of the tenant is held, each for what it costs.
    for path in
        ["/v1/runs".to_owned(), "/v1/tasks?scopeId=reads&status=failed".to_owned(), format!("/v1/tasks/{id}")]
    {
        let refused = reader.send(Method::GET, &path, None).await;
        assert_eq!(
            (refused.status, refused.body["error"]["code"].as_str()),
            (429, Some("WORKFLOW_AI_READ_RATE")),
            "{path}"
        );
        assert!(retry_after(&refused) >= 1, "{path}");
    }
    // Writes are not reads: a create, a cancel still answer.
    assert_eq!(reader.post("/v1/tasks", &task("two")).await.0, 201);
    assert_eq!(reader.post(&format!("/v1/tasks/{id}/cancel"), &json!({})).await.0, 200);

    // Another tenant reads on.
    let other = stack.api(OTHER);
    let (status, summary) = other.get("/v1/summary").await;
    assert_eq!(status, 200, "{summary}");
    assert_eq!(other.get("/v1/tasks?scopeId=reads").await.0, 200);
}

/// The wide reads spend from the tenant's bucket in Postgres: a second instance of the API (a
/// second dev server on the same database) finds it spent by the first.
#[tokio::test]
async fn a_tenants_read_rate_holds_across_instances() {
    let limits = [("AITASK_READ_RATE", "1"), ("AITASK_READ_BURST", "2000")];
    let stack = Stack::start_with(&limits).await;
    let mut overrides = limits.to_vec();
    overrides.push(("AITASK_LOCAL_POLLERS", "0"));
    let second = DevServer::spawn(Stack::env(&stack.db, &stack.queues, &stack.stub, &overrides)).await;
    let first = stack.api(READER);
    let on_second = Api::new(&second.address, dev_token(READER));
    assert_eq!(first.get("/v1/summary").await.0, 200);
    assert_eq!(on_second.get("/v1/summary").await.0, 200, "the second instance's own bucket is full");
    let refused = on_second.send(Method::GET, "/v1/summary", None).await;
    assert_eq!(
        (refused.status, refused.body["error"]["code"].as_str()),
        (429, Some("WORKFLOW_AI_READ_RATE")),
        "the tenant's shared bucket was spent on both: {}",
        refused.body
    );
    assert!(retry_after(&refused) >= 990);
    assert_eq!(first.send(Method::GET, "/v1/summary", None).await.status, 429);
    assert_eq!(stack.api(OTHER).get("/v1/summary").await.0, 200, "only this tenant's");
}
