//! The read API for history (docs/api.md, "History") through the dev server: `GET /v1/runs`
//! (task counts, filters, keyset pages), a task's events, its callbacks (never a token) and the
//! provider batch a deferred task was sent in; another tenant's run or task is a 404 exactly as
//! a missing one, and a bad query parameter is a 400 `INVALID_REQUEST` naming it.

use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-history";

fn run_task(run_id: &str, effect_key: &str) -> Value {
    json!({"runId": run_id, "stepKey": "summary", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "generate_text", "prompt": "Summarize.", "input": {"text": effect_key}}})
}

async fn create_run(api: &Api) -> String {
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "history"})).await;
    assert_eq!(status, 201, "{run}");
    run["id"].as_str().unwrap().to_owned()
}

/// Every run of `GET /v1/runs` from `query`, page by page; the pages' sizes.
async fn all_runs(api: &Api, query: &str) -> (Vec<Value>, Vec<usize>) {
    let (mut runs, mut sizes, mut after) = (Vec::new(), Vec::new(), None::<String>);
    loop {
        let path = match &after {
            Some(after) => format!("/v1/runs?{query}&after={after}"),
            None => format!("/v1/runs?{query}"),
        };
        let (status, page) = api.get(&path).await;
        assert_eq!(status, 200, "{path}: {page}");
        let listed = page["runs"].as_array().unwrap();
        sizes.push(listed.len());
        runs.extend(listed.iter().cloned());
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => return (runs, sizes),
        }
    }
}

fn error_code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn runs_are_listed_with_their_task_counts_in_pages_and_filters() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let mut runs = Vec::new();
    for _ in 0..5 {
        runs.push(create_run(&api).await);
    }
    // The first run: two tasks that succeed; the second: canceled with a queued task in it.
    for key in ["a", "b"] {
        let (status, task) = api.post("/v1/tasks", &run_task(&runs[0], key)).await;
        assert_eq!(status, 201, "{task}");
        api.wait_terminal(task["id"].as_str().unwrap(), Duration::from_secs(15)).await;
    }
    let (status, _) = api.post(&format!("/v1/runs/{}/cancel", runs[1]), &json!({})).await;
    assert_eq!(status, 200);

    // Two a page: three pages, in creation order, each run once.
    let (listed, sizes) = all_runs(&api, "limit=2").await;
    assert_eq!(sizes, [2, 2, 1]);
    let ids: Vec<&str> = listed.iter().map(|run| run["id"].as_str().unwrap()).collect();
    assert_eq!(ids, runs.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        listed[0]["tasks"],
        json!({"queued": 0, "running": 0, "succeeded": 2, "failed": 0, "canceled": 0, "more": false})
    );
    assert_eq!(listed[0]["scopeId"], "history");
    assert_eq!(listed[0]["state"], "running");
    assert_eq!(listed[1]["state"], "canceled");
    assert_eq!(listed[2]["tasks"]["succeeded"], 0);
    // A page exactly full says so with `next`, and the page after it is empty.
    let (_, sizes) = all_runs(&api, "limit=5").await;
    assert_eq!(sizes, [5, 0]);

    // Filters: the state, and the creation time's half-open window.
    let (canceled, _) = all_runs(&api, "status=canceled").await;
    assert_eq!(canceled.len(), 1);
    assert_eq!(canceled[0]["id"].as_str(), Some(runs[1].as_str()));
    let first = listed[0]["createdAt"].as_str().unwrap().replace('+', "%2B");
    assert_eq!(all_runs(&api, &format!("createdAfter={first}")).await.0.len(), 5);
    assert_eq!(all_runs(&api, &format!("createdBefore={first}")).await.0.len(), 0);
    let fifth = listed[4]["createdAt"].as_str().unwrap().replace('+', "%2B");
    let (before_fifth, _) = all_runs(&api, &format!("createdBefore={fifth}")).await;
    assert_eq!(before_fifth.len(), 4, "createdBefore is exclusive");
    let (from_fifth, _) = all_runs(&api, &format!("createdAfter={fifth}")).await;
    assert_eq!(from_fifth.len(), 1, "createdAfter is inclusive");

    // Another tenant sees none of them.
    let (status, other) = stack.api("someone-else").get("/v1/runs").await;
    assert_eq!((status, other), (200, json!({"runs": []})));

    // Bad parameters: 400 naming each, nothing listed.
    for (query, path) in [
        ("status=done", "status"),
        ("createdAfter=yesterday", "createdAfter"),
        ("createdBefore=2026-01-01", "createdBefore"),
        ("after=not-a-run", "after"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
    ] {
        let (status, answer) = api.get(&format!("/v1/runs?{query}")).await;
        assert_eq!((status, error_code(&answer)), (400, "INVALID_REQUEST"), "{query}: {answer}");
        assert_eq!(answer["error"]["details"][0]["path"], path, "{query}: {answer}");
    }
}

#[tokio::test]
async fn a_tasks_events_and_batch_and_another_tenants_404() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let run = create_run(&api).await;
    let (_, task) = api.post("/v1/tasks", &run_task(&run, "events")).await;
    let id = task["id"].as_str().unwrap().to_owned();
    api.wait_terminal(&id, Duration::from_secs(15)).await;

    // Its one completion event, delivered to the bus soon after.
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    let events = loop {
        let (status, answer) = api.get(&format!("/v1/tasks/{id}/events")).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["more"], false);
        let events = answer["events"].as_array().unwrap().clone();
        assert_eq!(events.len(), 1, "{answer}");
        if events[0]["deliveredAt"].is_string() || tokio::time::Instant::now() >= until {
            break events;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(events[0]["type"], "task.settled");
    assert_eq!(events[0]["status"], "succeeded");
    assert!(events[0]["createdAt"].is_string() && events[0]["deliveredAt"].is_string(), "{events:?}");

    // Neither callbacks nor a provider batch: an empty list, and 404 NOT_IN_BATCH.
    let (status, answer) = api.get(&format!("/v1/tasks/{id}/callbacks")).await;
    assert_eq!((status, answer), (200, json!({"callbacks": [], "more": false})));
    let (status, answer) = api.get(&format!("/v1/tasks/{id}/batch")).await;
    assert_eq!((status, error_code(&answer)), (404, "NOT_IN_BATCH"), "{answer}");

    // Bounded: a task with more than 100 callbacks answers the oldest 100 and says there are more.
    stack
        .db
        .sql_as_owner(&format!(
            "INSERT INTO task_callbacks (task_id, app_id, kind, token_hash, state, ended_at)
             SELECT '{id}', '{APP}', 'step_functions', decode(md5(g::text), 'hex'), 'delivered', now()
             FROM generate_series(1, 101) g"
        ))
        .await;
    let (status, answer) = api.get(&format!("/v1/tasks/{id}/callbacks")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!((answer["callbacks"].as_array().unwrap().len(), &answer["more"]), (100, &json!(true)));

    // Another tenant's task, a missing one and a path that is not a task id: the same 404.
    let other = stack.api("someone-else");
    let missing = uuid::Uuid::now_v7();
    for route in ["events", "callbacks", "batch"] {
        for (api, task) in [(&other, id.clone()), (&api, missing.to_string()), (&api, "nope".to_owned())] {
            let (status, answer) = api.get(&format!("/v1/tasks/{task}/{route}")).await;
            assert_eq!((status, error_code(&answer)), (404, "NOT_FOUND"), "{route} of {task}: {answer}");
        }
    }
    let answer = api.send("POST".parse().unwrap(), &format!("/v1/tasks/{id}/events"), None).await;
    assert_eq!((answer.status, answer.header("allow")), (405, Some("GET".to_owned())), "{}", answer.body);
}

#[tokio::test]
async fn a_callback_is_shown_without_its_token() {
    let durable = DurableStub::start().await;
    let stack = Stack::start_with(&[
        ("AWS_ENDPOINT_URL_LAMBDA", &durable.endpoint),
        ("AWS_ACCESS_KEY_ID", DURABLE_ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", DURABLE_SECRET_KEY),
        ("AITASK_CALLBACK_HEARTBEAT_MS", "300"),
    ])
    .await;
    let api = stack.api(APP);
    let token = durable.open();
    let create = json!({
        "owner": {"scopeId": "docs"}, "stepKey": "classify", "effectKey": "called-back", "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
        "callback": {"lambdaDurable": {"callbackId": token}},
    });
    let (status, task) = api.post("/v1/tasks", &create).await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let (status, answer) = api.get(&format!("/v1/tasks/{id}/callbacks")).await;
    assert_eq!(status, 200, "{answer}");
    assert!(!answer.to_string().contains(&token), "the token is never in the answer: {answer}");
    api.wait_terminal(&id, Duration::from_secs(15)).await;

    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    let callback = loop {
        let (status, answer) = api.get(&format!("/v1/tasks/{id}/callbacks")).await;
        assert_eq!(status, 200, "{answer}");
        assert!(!answer.to_string().contains(&token), "the token is never in the answer: {answer}");
        let callbacks = answer["callbacks"].as_array().unwrap();
        assert_eq!(callbacks.len(), 1, "{answer}");
        if callbacks[0]["state"] == "delivered" || tokio::time::Instant::now() >= until {
            break callbacks[0].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(callback["kind"], "lambda_durable");
    assert_eq!(callback["state"], "delivered", "{callback}");
    assert!(callback["tries"].as_u64().unwrap() >= 1, "{callback}");
    assert!(callback["attachedAt"].is_string() && callback["endedAt"].is_string(), "{callback}");
    let keys: Vec<&String> = callback.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["attachedAt", "dueAt", "endedAt", "heartbeatAt", "kind", "state", "tries"]);
}

#[tokio::test]
async fn a_deferred_task_shows_the_provider_batch_it_was_sent_in() {
    let batches = StubBatches::start().await;
    let models = json!({
        "batchable": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY", "batch": {"maxRecords": 2, "maxWaitSeconds": 3600}}
    })
    .to_string();
    let stack = Stack::start_with(&[
        ("AITASK_MODELS", &models),
        ("BATCH_KEY", BATCH_STUB_KEY),
        ("AITASK_BATCH_POLL_MS", "200"),
    ])
    .await;
    let api = stack.api(APP);
    let mut ids = Vec::new();
    for key in ["night-1", "night-2"] {
        let create = json!({"owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": key,
            "modelId": "batchable", "delivery": {"deferred": {"within": "PT24H"}},
            "request": {"kind": "classify", "prompt": "Route the ticket.", "input": key,
                        "choices": ["billing", "bug", "other"]}});
        let (status, task) = api.post("/v1/tasks", &create).await;
        assert_eq!(status, 201, "{task}");
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        let task = api.wait_terminal(id, Duration::from_secs(60)).await;
        assert_eq!(task["status"], "succeeded", "{task}");
    }
    let (status, batch) = api.get(&format!("/v1/tasks/{}/batch", ids[0])).await;
    assert_eq!(status, 200, "{batch}");
    assert_eq!(batch["provider"], "openai");
    assert!(batch["providerBatchId"].as_str().is_some_and(|id| !id.is_empty()), "{batch}");
    assert_eq!(batch["requests"], 2, "{batch}");
    assert_eq!(batch["pending"], 0, "both settled: {batch}");
    assert!(matches!(batch["status"].as_str(), Some("submitted" | "ended")), "{batch}");
    let (_, same) = api.get(&format!("/v1/tasks/{}/batch", ids[1])).await;
    assert_eq!(same["id"], batch["id"], "one batch carried both");
    let (status, answer) = stack.api("someone-else").get(&format!("/v1/tasks/{}/batch", ids[0])).await;
    assert_eq!((status, error_code(&answer)), (404, "NOT_FOUND"), "{answer}");
}
