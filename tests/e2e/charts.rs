//! The reads behind the pictures (docs/api.md, "History" and "Activity") through the dev server:
//! a run's progress counted by status, and the tenant's activity in buckets (created, ended by
//! status, failures by error code, times, usage and cost by model); another tenant's run is a
//! 404 and its tasks are never in the activity; a bad parameter is a 400 naming it.

use aitasks_testkit::*;
use serde_json::{json, Value};

fn task(owner: Value, key: &str, model: &str) -> Value {
    json!({"owner": owner, "stepKey": "label", "effectKey": key, "modelId": model,
           "request": {"kind": "classify", "prompt": "Spam?", "input": {"text": key}, "choices": ["spam", "ham"]}})
}

async fn priced_stack(stub: &StubProvider) -> Stack {
    let models = json!({
        "priced": {"provider": "openai", "model": "stub-model", "baseUrl": stub.base_url, "apiKeyEnv": "PRICED_KEY",
                   "prices": {"inputPerMillion": 1_000_000.0, "outputPerMillion": 2_000_000.0}}
    })
    .to_string();
    Stack::start_with(&[("AITASK_MODELS", &models), ("PRICED_KEY", STUB_API_KEY)]).await
}

#[tokio::test]
async fn a_runs_progress_counts_its_tasks_by_status_now() {
    let stub = StubProvider::start().await;
    let stack = priced_stack(&stub).await;
    let api = stack.api("app-progress");
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "progress"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();
    let in_run = |key: &str| {
        let mut body = task(json!(null), key, "priced");
        body.as_object_mut().unwrap().remove("owner");
        body["runId"] = json!(run_id);
        body
    };
    let mut ids = Vec::new();
    for key in ["one", "two"] {
        let (_, created) = api.post("/v1/tasks", &in_run(key)).await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    stub.script([Reply::status(401)]);
    let (_, failing) = api.post("/v1/tasks", &in_run("denied")).await;
    ids.push(failing["id"].as_str().unwrap().to_owned());
    for id in &ids {
        api.wait_terminal(id).await;
    }
    let (status, progress) = api.get(&format!("/v1/runs/{run_id}/progress")).await;
    assert_eq!(status, 200, "{progress}");
    assert_eq!(
        progress,
        json!({"runId": run_id, "state": "running", "queued": 0, "running": 0, "succeeded": 2, "failed": 1,
               "canceled": 0, "total": 3, "complete": true})
    );
    // Canceled: its tasks are done, and the bar says so.
    let (status, _) = api.post(&format!("/v1/runs/{run_id}/cancel"), &json!({})).await;
    assert_eq!(status, 200);
    let (_, progress) = api.get(&format!("/v1/runs/{run_id}/progress")).await;
    assert_eq!((progress["state"].as_str(), progress["total"].as_u64()), (Some("canceled"), Some(3)));

    let (status, answer) = stack.api("app-progress-other").get(&format!("/v1/runs/{run_id}/progress")).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "another tenant's run");
    let (status, _) = api.get("/v1/runs/not-a-run/progress").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_activity_counts_the_tenants_tasks_by_the_minute_and_never_another_tenants() {
    let stub = StubProvider::start().await;
    let stack = priced_stack(&stub).await;
    let api = stack.api("app-activity");
    let owner = json!({"scopeId": "activity"});
    let mut ids = Vec::new();
    for key in ["one", "two"] {
        let (status, created) = api.post("/v1/tasks", &task(owner.clone(), key, "priced")).await;
        assert_eq!(status, 201, "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    stub.script([Reply::status(401)]);
    let (_, failing) = api.post("/v1/tasks", &task(owner.clone(), "denied", "priced")).await;
    ids.push(failing["id"].as_str().unwrap().to_owned());
    for id in &ids {
        api.wait_terminal(id).await;
    }
    let other = stack.api("app-activity-other");
    let (_, theirs) = other.post("/v1/tasks", &task(owner.clone(), "theirs", "priced")).await;
    other.wait_terminal(theirs["id"].as_str().unwrap()).await;

    let (status, activity) = api.get("/v1/activity?bucket=60").await;
    assert_eq!(status, 200, "{activity}");
    let typed: aitasks_contracts::Activity =
        serde_json::from_value(activity.clone()).expect("the contract's shape");
    assert_eq!(typed.bucket_seconds, 60);
    assert!(typed.complete);
    assert_eq!(typed.buckets.len(), 1_440, "the last 24 hours by the minute");
    let sum = |f: fn(&aitasks_contracts::ActivityBucket) -> u64| typed.buckets.iter().map(f).sum::<u64>();
    assert_eq!((sum(|b| b.created), sum(|b| b.succeeded), sum(|b| b.failed)), (3, 2, 1), "{activity}");
    let failures: Vec<(String, u64)> = typed
        .buckets
        .iter()
        .flat_map(|b| b.failures.iter().map(|f| (f.error_code.clone(), f.tasks)))
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].1, 1);
    assert_eq!(sum(|b| b.run_ms.samples), 3, "each ended running");
    let priced: Vec<_> =
        typed.buckets.iter().flat_map(|b| &b.models).filter(|m| m.model_id == "priced").collect();
    assert_eq!(priced.iter().map(|m| m.tasks).sum::<u64>(), 3);
    let cost: f64 = priced.iter().filter_map(|m| m.estimated_cost_usd).sum();
    assert!(cost > 0.0, "two answers at the profile's prices: {activity}");
    assert_eq!(sum(|b| b.input_tokens), priced.iter().map(|m| m.input_tokens).sum::<u64>());

    let (_, theirs) = other.get("/v1/activity?bucket=60").await;
    let created: u64 =
        theirs["buckets"].as_array().unwrap().iter().map(|b| b["created"].as_u64().unwrap()).sum();
    assert_eq!(created, 1, "only their own task: {theirs}");

    for (query, named) in [
        ("bucket=61", "bucket"),
        ("from=yesterday", "from"),
        ("bucket=60&from=2020-01-01T00:00:00Z&to=2020-01-01T01:00:00Z", "from"),
        ("from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "to"),
    ] {
        let (status, answer) = api.get(&format!("/v1/activity?{query}")).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{query}: {answer}"
        );
        assert_eq!(answer["error"]["details"][0]["path"].as_str(), Some(named), "{query}: {answer}");
    }
}
