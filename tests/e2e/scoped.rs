//! Scoped inference through the HTTP API: the cache, admission answers, release and deletion.

use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-scoped";

fn scoped(effect_key: &str, source: &str, revision: &str, burst: u64) -> Value {
    json!({
        "owner": {"scopeId": "workspace-1", "usageSubject": {"type": "user", "id": "u-7"}},
        "stepKey": "summarize", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "generate_text", "prompt": "Summarize", "input": {"doc": source}},
        "scope": {"sourceId": source, "sourceRevision": revision, "recompute": false,
                  "budget": {"burst": burst, "tasksPerMinute": 1, "maxStepsPerSource": 20,
                             "sourcesPer24Hours": 100, "scopeConcurrent": 4, "globalConcurrent": 100}},
    })
}

#[tokio::test]
async fn a_cache_hit_calls_no_provider_and_a_refusal_carries_retry_after() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let (status, first) = api.post("/v1/tasks", &scoped("a", "doc-1", "r1", 2)).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(
        first["usageSubject"],
        json!({"type": "user", "id": "u-7"}),
        "attributed to the owner's subject"
    );
    let done = api.wait_terminal(first["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "succeeded");
    assert_eq!(stack.stub.calls(), 1);

    let (status, hit) = api.post("/v1/tasks", &scoped("b", "doc-1", "r1", 2)).await;
    assert_eq!(status, 201, "a hit is a new task");
    assert_eq!((hit["status"].as_str(), hit["attempts"].as_i64()), (Some("succeeded"), Some(0)));
    assert_eq!(hit["usage"], Value::Null);
    assert_eq!(hit["output"], done["output"]);
    // No message left that could reach a worker.
    stack.queues.wait_until_empty(&stack.queues.tasks).await;
    assert_eq!(stack.stub.calls(), 1, "no provider call for a hit");

    // One token left of two: a new revision takes it, the next is refused with Retry-After.
    assert_eq!(api.post("/v1/tasks", &scoped("c", "doc-1", "r2", 2)).await.0, 201);
    let refused = api
        .send(
            reqwest::Method::POST,
            "/v1/tasks",
            Some(scoped("d", "doc-1", "r3", 2).to_string().into_bytes()),
        )
        .await;
    assert_eq!(
        (refused.status, refused.body["error"]["code"].as_str()),
        (429, Some("WORKFLOW_AI_RATE_LIMIT"))
    );
    let retry_after: u64 =
        refused.headers.get("retry-after").expect("Retry-After").to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks WHERE effect_key = 'd'").await, 0);
}

#[tokio::test]
async fn deleting_a_scope_aborts_its_running_task_and_release_lists_correctly() {
    let stack = Stack::start().await;
    stack.stub.set_default(Reply::slow(Duration::from_secs(30)));
    let api = stack.api(APP);
    let (_, task) = api.post("/v1/tasks", &scoped("slow", "doc-9", "r1", 5)).await;
    let id = task["id"].as_str().unwrap().to_owned();
    api.wait_for(&id, |t| t["status"] == "running").await;

    let (status, listed) = api.get("/v1/unreleased-sources").await;
    assert_eq!(status, 200);
    assert_eq!(listed["sources"], json!([{"scopeId": "workspace-1", "sourceId": "doc-9"}]));
    assert!(listed.get("next").is_none(), "no next page");
    assert_eq!(api.get("/v1/unreleased-sources?task=other-step").await.1["sources"], json!([]));

    let started = Instant::now();
    let (status, deleted) = api.delete("/v1/scopes/workspace-1/tasks?sourceId=doc-9").await;
    assert_eq!((status, deleted["deleted"].as_u64()), (200, Some(1)));
    wait_until("the in-flight call to be aborted", || std::future::ready(stack.stub.aborted() > 0)).await;
    println!("aborted {:?} after the delete", started.elapsed());
    assert_eq!(api.get(&format!("/v1/tasks/{id}")).await.0, 404, "gone, and never written back");
    assert_eq!(stack.db.count("SELECT count(*) FROM scope_admissions").await, 1, "admission history kept");

    let (_, other) = api.post("/v1/tasks", &scoped("keep", "doc-10", "r1", 5)).await;
    assert_eq!(other["status"], "queued");
    assert_eq!(
        api.post("/v1/tasks/release", &json!({"scopeId": "workspace-1", "effectKey": "keep"})).await.1
            ["released"],
        true
    );
    assert_eq!(
        api.post("/v1/tasks/release", &json!({"scopeId": "workspace-1", "effectKey": "nope"})).await.1
            ["released"],
        false
    );
    assert_eq!(api.get("/v1/unreleased-sources").await.1["sources"], json!([]));
    assert_eq!(api.post("/v1/tasks/release", &json!({"scopeId": "workspace-1"})).await.0, 400);
}

/// `AITASK_SYSTEM_ACTIVE_CAP` is the operator's cap on every application's active scoped work
/// together: a second application is refused once the first filled it, whatever its own budget.
#[tokio::test]
async fn the_system_wide_cap_counts_every_application() {
    let stack = Stack::start_with(&[("AITASK_SYSTEM_ACTIVE_CAP", "2")]).await;
    // Slow enough that both stay active while the third create comes.
    stack.stub.set_default(Reply::slow(Duration::from_secs(4)));
    let (first, second) = (stack.api("app-one"), stack.api("app-two"));
    assert_eq!(first.post("/v1/tasks", &scoped("a", "doc-1", "r1", 5)).await.0, 201);
    assert_eq!(first.post("/v1/tasks", &scoped("b", "doc-2", "r1", 5)).await.0, 201);
    let (status, refused) = second.post("/v1/tasks", &scoped("c", "doc-3", "r1", 5)).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (429, Some("WORKFLOW_AI_CAPACITY")), "{refused}");
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks WHERE app_id = 'app-two'").await, 0);
}
