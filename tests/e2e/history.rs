//! The read API for history (docs/api.md, "History") through the dev server: `GET /v1/runs`
//! (task counts, filters, keyset pages), a task's events, its callbacks (never a token) and the
//! provider batch a deferred task was sent in, its attempts (a retried one keeps its error), the
//! tenant's summary, and the listing's kind/model/time filters; another tenant's run or task is
//! a 404 exactly as a missing one, and a bad query parameter is a 400 `INVALID_REQUEST` naming
//! it.

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
        api.wait_terminal(task["id"].as_str().unwrap()).await;
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
    api.wait_terminal(&id).await;

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
    api.wait_terminal(&id).await;

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

/// A provider batch can carry several tenants' tasks: each tenant sees its own share of it
/// (`requests`, `pending`), never another tenant's volume.
#[tokio::test]
async fn a_deferred_task_shows_the_provider_batch_it_was_sent_in_counting_only_its_tenants_tasks() {
    const OTHER: &str = "app-history-other";
    let batches = StubBatches::start().await;
    let models = json!({
        "batchable": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY", "batch": {"maxRecords": 3, "maxWaitSeconds": 3600}}
    })
    .to_string();
    let stack = Stack::start_with(&[
        ("AITASK_MODELS", &models),
        ("BATCH_KEY", BATCH_STUB_KEY),
        ("AITASK_BATCH_POLL_MS", "200"),
    ])
    .await;
    let (api, other) = (stack.api(APP), stack.api(OTHER));
    // Two tasks of APP and one of OTHER: the profile's batch is full at three, so one batch
    // carries all of them.
    let mut ids = Vec::new();
    for (tenant, key) in [(&api, "night-1"), (&api, "night-2"), (&other, "night-3")] {
        let create = json!({"owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": key,
            "modelId": "batchable", "delivery": {"deferred": {"within": "PT24H"}},
            "request": {"kind": "classify", "prompt": "Route the ticket.", "input": key,
                        "choices": ["billing", "bug", "other"]}});
        let (status, task) = tenant.post("/v1/tasks", &create).await;
        assert_eq!(status, 201, "{task}");
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    for (tenant, id) in [(&api, &ids[0]), (&api, &ids[1]), (&other, &ids[2])] {
        let task = tenant.wait_terminal(id).await;
        assert_eq!(task["status"], "succeeded", "{task}");
    }
    let (status, batch) = api.get(&format!("/v1/tasks/{}/batch", ids[0])).await;
    assert_eq!(status, 200, "{batch}");
    assert_eq!(batch["provider"], "openai");
    assert!(batch["providerBatchId"].as_str().is_some_and(|id| !id.is_empty()), "{batch}");
    assert_eq!(batch["requests"], 2, "APP's two tasks, not the other tenant's: {batch}");
    assert_eq!(batch["pending"], 0, "both settled: {batch}");
    assert!(matches!(batch["status"].as_str(), Some("submitted" | "ended")), "{batch}");
    let (_, same) = api.get(&format!("/v1/tasks/{}/batch", ids[1])).await;
    assert_eq!(same["id"], batch["id"], "one batch carried both");
    let (status, theirs) = other.get(&format!("/v1/tasks/{}/batch", ids[2])).await;
    assert_eq!(status, 200, "{theirs}");
    assert_eq!(theirs["id"], batch["id"], "and the other tenant's task: {theirs}");
    assert_eq!(theirs["requests"], 1, "the other tenant's one task, not APP's: {theirs}");
    // The batch's attempt is on record as any other: one, succeeded, with the batch line's usage.
    let (status, answer) = api.get(&format!("/v1/tasks/{}/attempts", ids[0])).await;
    assert_eq!(status, 200, "{answer}");
    let attempts = answer["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{answer}");
    assert_eq!(
        (attempts[0]["attempt"].as_u64(), attempts[0]["outcome"].as_str()),
        (Some(1), Some("succeeded"))
    );
    assert_eq!(attempts[0]["profile"], "batchable", "{answer}");
    assert!(attempts[0]["usage"]["inputTokens"].is_u64(), "{answer}");
    let (status, answer) = stack.api("someone-else").get(&format!("/v1/tasks/{}/batch", ids[0])).await;
    assert_eq!((status, error_code(&answer)), (404, "NOT_FOUND"), "{answer}");
}

/// A stack whose `priced` profile answers from `stub` at round prices: $1 an input token, $2 an
/// output token (the stub's usage is 11 in, 7 out: $25 an answer).
async fn priced_stack(stub: &StubProvider) -> Stack {
    let models = json!({
        "priced": {"provider": "openai", "model": "stub-model", "baseUrl": stub.base_url, "apiKeyEnv": "PRICED_KEY",
                   "prices": {"inputPerMillion": 1_000_000.0, "outputPerMillion": 2_000_000.0}}
    })
    .to_string();
    Stack::start_with(&[("AITASK_MODELS", &models), ("PRICED_KEY", STUB_API_KEY)]).await
}

fn priced_task(scope: &str, effect_key: &str) -> Value {
    json!({"owner": {"scopeId": scope}, "stepKey": "label", "effectKey": effect_key, "modelId": "priced",
           "request": {"kind": "classify", "prompt": "Spam?", "input": {"text": effect_key},
                       "choices": ["spam", "ham"]}})
}

#[tokio::test]
async fn a_retried_attempt_keeps_its_error_and_the_next_shows_its_usage_and_cost() {
    let stub = StubProvider::start().await;
    let stack = priced_stack(&stub).await;
    let api = stack.api(APP);
    // Attempt 1: the provider answers 500 (retryable); attempt 2 answers.
    stub.script([Reply::status(500)]);
    let (status, task) = api.post("/v1/tasks", &priced_task("attempts", "flaky")).await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let task = api.wait_terminal(&id).await;
    assert_eq!((task["status"].as_str(), task["attempts"].as_i64()), (Some("succeeded"), Some(2)), "{task}");
    assert_eq!(task["errorCode"], Value::Null, "the task itself shows only its last attempt: {task}");

    let (status, answer) = api.get(&format!("/v1/tasks/{id}/attempts")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["more"], false);
    let attempts = answer["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{answer}");
    let (first, second) = (&attempts[0], &attempts[1]);
    assert_eq!((first["attempt"].as_i64(), first["outcome"].as_str()), (Some(1), Some("retried")), "{first}");
    assert_eq!(first["errorCode"], "WORKFLOW_AI_PROVIDER_ERROR", "{first}");
    assert!(first["errorMessage"].as_str().is_some_and(|m| m.contains("500")), "{first}");
    assert_eq!((&first["usage"], &first["estimatedCostUsd"]), (&Value::Null, &Value::Null), "{first}");
    assert!(first["startedAt"].is_string() && first["endedAt"].is_string(), "{first}");
    assert!(
        first["endedAt"].as_str() <= second["startedAt"].as_str(),
        "attempt 2 starts after 1 ends: {answer}"
    );

    assert_eq!(
        (second["attempt"].as_i64(), second["outcome"].as_str()),
        (Some(2), Some("succeeded")),
        "{second}"
    );
    assert_eq!(second["usage"], json!({"inputTokens": 11, "outputTokens": 7}), "{second}");
    let cost = second["estimatedCostUsd"].as_f64().expect("a priced profile's cost");
    assert!((cost - 25.0).abs() < 1e-6, "11 × $1 + 7 × $2: {second}");
    assert_eq!(
        (second["profile"].as_str(), second["modelId"].as_str()),
        (Some("priced"), Some("stub-model"))
    );
    assert_eq!((&second["errorCode"], &second["errorMessage"]), (&Value::Null, &Value::Null), "{second}");
    let mut keys: Vec<&String> = second.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "attempt",
            "endedAt",
            "errorCode",
            "errorMessage",
            "estimatedCostUsd",
            "modelId",
            "outcome",
            "profile",
            "startedAt",
            "usage"
        ]
    );

    // Another tenant's task, a missing one and a path that is not a task id: the same 404.
    let other = stack.api("someone-else");
    let missing = uuid::Uuid::now_v7().to_string();
    for (api, task) in [(&other, id.as_str()), (&api, missing.as_str()), (&api, "nope")] {
        let (status, answer) = api.get(&format!("/v1/tasks/{task}/attempts")).await;
        assert_eq!((status, error_code(&answer)), (404, "NOT_FOUND"), "{task}: {answer}");
    }
    let answer = api.send("DELETE".parse().unwrap(), &format!("/v1/tasks/{id}/attempts"), None).await;
    assert_eq!((answer.status, answer.header("allow")), (405, Some("GET".to_owned())), "{}", answer.body);
}

#[tokio::test]
async fn a_running_attempt_is_listed_then_shown_canceled() {
    let stub = StubProvider::start().await;
    let stack = priced_stack(&stub).await;
    let api = stack.api(APP);
    stub.set_default(Reply::slow(Duration::from_secs(30)));
    let (_, task) = api.post("/v1/tasks", &priced_task("running", "slow")).await;
    let id = task["id"].as_str().unwrap().to_owned();
    api.wait_for(&id, |t| t["status"] == "running").await;
    let (status, answer) = api.get(&format!("/v1/tasks/{id}/attempts")).await;
    assert_eq!(status, 200, "{answer}");
    let running = &answer["attempts"][0];
    assert_eq!(answer["attempts"].as_array().unwrap().len(), 1, "{answer}");
    assert_eq!((running["attempt"].as_i64(), running["outcome"].as_str()), (Some(1), Some("running")));
    assert!(running["startedAt"].is_string() && running["endedAt"].is_null(), "{running}");

    let (status, _) = api.post(&format!("/v1/tasks/{id}/cancel"), &json!({})).await;
    assert_eq!(status, 200);
    let task = api.wait_terminal(&id).await;
    assert_eq!(task["status"], "canceled", "{task}");
    let (_, answer) = api.get(&format!("/v1/tasks/{id}/attempts")).await;
    let canceled = &answer["attempts"][0];
    assert_eq!(answer["attempts"].as_array().unwrap().len(), 1, "{answer}");
    assert_eq!(
        (canceled["outcome"].as_str(), canceled["errorCode"].as_str()),
        (Some("canceled"), Some("WORKFLOW_AI_CANCELED"))
    );
    assert!(canceled["endedAt"].is_string(), "{canceled}");

    // A task canceled at once lists exactly the attempts it spent (none if still queued).
    stub.set_default(Reply::Auto);
    let (_, queued) = api.post("/v1/tasks", &priced_task("running", "never-run")).await;
    let queued_id = queued["id"].as_str().unwrap();
    stack
        .db
        .sql_as_owner(&format!("UPDATE tasks SET message_sent_at = now() WHERE id = '{queued_id}'"))
        .await;
    let (status, _) = api.post(&format!("/v1/tasks/{queued_id}/cancel"), &json!({})).await;
    assert_eq!(status, 200);
    let ended = api.wait_terminal(queued_id).await;
    let (_, answer) = api.get(&format!("/v1/tasks/{queued_id}/attempts")).await;
    assert_eq!(
        answer["attempts"].as_array().unwrap().len() as i64,
        ended["attempts"].as_i64().unwrap(),
        "{answer}"
    );
}

#[tokio::test]
async fn the_summary_counts_the_tenants_tasks_and_their_cost_by_day_and_model() {
    let stub = StubProvider::start().await;
    let stack = priced_stack(&stub).await;
    let api = stack.api("app-summary");
    let mut ids = Vec::new();
    for key in ["one", "two"] {
        let (status, task) = api.post("/v1/tasks", &priced_task("summary", key)).await;
        assert_eq!(status, 201, "{task}");
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    // One that fails (not retried): counted, with no usage.
    stub.script([Reply::status(401)]);
    let (_, failing) = api.post("/v1/tasks", &priced_task("summary", "denied")).await;
    let failing_id = failing["id"].as_str().unwrap().to_owned();
    let (_, other_model) = api
        .post(
            "/v1/tasks",
            &json!({"owner": {"scopeId": "summary"}, "stepKey": "s",
        "effectKey": "default-model", "modelId": "default",
        "request": {"kind": "generate_text", "prompt": "Say hi.", "input": {}}}),
        )
        .await;
    let other_model_id = other_model["id"].as_str().unwrap().to_owned();
    let mut statuses = Vec::new();
    for id in ids.iter().chain([&failing_id, &other_model_id]) {
        statuses.push(api.wait_terminal(id).await["status"].as_str().unwrap().to_owned());
    }
    let succeeded = statuses.iter().filter(|s| *s == "succeeded").count() as u64;
    let failed = statuses.iter().filter(|s| *s == "failed").count() as u64;
    assert_eq!((succeeded + failed, failed), (4, 1), "{statuses:?}");

    let (status, summary) = api.get("/v1/summary").await;
    assert_eq!(status, 200, "{summary}");
    assert_eq!(
        summary["tasks"],
        json!({"queued": 0, "running": 0, "succeeded": succeeded, "failed": 1, "canceled": 0}),
        "{summary}"
    );
    assert_eq!((summary["examined"].as_u64(), summary["complete"].as_bool()), (Some(4), Some(true)));
    let (_, first) = api.get(&format!("/v1/tasks/{}", ids[0])).await;
    let today = first["createdAt"].as_str().unwrap()[..10].to_owned();
    let costs = summary["costs"].as_array().unwrap();
    let models: Vec<&str> = costs.iter().map(|c| c["modelId"].as_str().unwrap()).collect();
    assert_eq!(models, ["default", "priced"], "by day, then model: {summary}");
    let priced = &costs[1];
    assert_eq!(priced["day"].as_str(), Some(today.as_str()), "{priced}");
    assert_eq!(priced["tasks"], 3, "every status counts: {priced}");
    assert_eq!((priced["inputTokens"].as_u64(), priced["outputTokens"].as_u64()), (Some(22), Some(14)));
    let cost = priced["estimatedCostUsd"].as_f64().expect("priced");
    assert!((cost - 50.0).abs() < 1e-6, "two answers at $25: {priced}");
    assert_eq!(costs[0]["estimatedCostUsd"], Value::Null, "the default profile has no prices: {summary}");
    let typed: aitasks_contracts::TenantSummary =
        serde_json::from_value(summary.clone()).expect("the documented shape");
    assert_eq!((typed.created_before - typed.created_after).num_days(), 7, "the default window: {summary}");

    // A window before the tasks: nothing. Another tenant: nothing of this one's.
    let (_, empty) =
        api.get("/v1/summary?createdAfter=2026-01-01T00:00:00Z&createdBefore=2026-01-31T00:00:00Z").await;
    assert_eq!(
        (empty["examined"].as_u64(), empty["costs"].as_array().map(Vec::len)),
        (Some(0), Some(0)),
        "{empty}"
    );
    let (status, other) = stack.api("someone-else").get("/v1/summary").await;
    assert_eq!(status, 200);
    assert_eq!(
        (other["examined"].as_u64(), other["tasks"]["succeeded"].as_u64()),
        (Some(0), Some(0)),
        "{other}"
    );

    // Bad windows: 400 naming the parameter.
    for (query, path) in [
        ("createdAfter=yesterday", "createdAfter"),
        ("createdBefore=2026-01-01", "createdBefore"),
        ("createdAfter=2026-01-01T00:00:00Z&createdBefore=2026-03-01T00:00:00Z", "createdAfter"),
        ("createdAfter=2026-01-02T00:00:00Z&createdBefore=2026-01-01T00:00:00Z", "createdBefore"),
    ] {
        let (status, answer) = api.get(&format!("/v1/summary?{query}")).await;
        assert_eq!((status, error_code(&answer)), (400, "INVALID_REQUEST"), "{query}: {answer}");
        assert_eq!(answer["error"]["details"][0]["path"], path, "{query}: {answer}");
    }
}

#[tokio::test]
async fn a_listing_narrows_by_kind_model_and_time_and_runs_by_scope() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let run = create_run(&api).await;
    let mut created = Vec::new();
    for (key, kind) in [("t1", "generate_text"), ("c1", "classify"), ("t2", "generate_text")] {
        let body = if kind == "classify" {
            json!({"runId": run, "stepKey": "s", "effectKey": key, "modelId": "default",
                   "request": {"kind": "classify", "prompt": "Spam?", "input": key, "choices": ["a", "b"]}})
        } else {
            run_task(&run, key)
        };
        let (status, task) = api.post("/v1/tasks", &body).await;
        assert_eq!(status, 201, "{task}");
        created.push(task);
    }
    let ids = |page: &Value| -> Vec<String> {
        page["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["effectKey"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, page) = api.get(&format!("/v1/tasks?runId={run}&kind=generate_text")).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(ids(&page), ["t1", "t2"]);
    assert!(page.get("next").is_none(), "{page}");
    let (_, page) = api.get(&format!("/v1/tasks?runId={run}&kind=classify&modelId=default")).await;
    assert_eq!(ids(&page), ["c1"]);
    let (_, page) = api.get(&format!("/v1/tasks?runId={run}&modelId=elsewhere")).await;
    assert_eq!(ids(&page), Vec::<String>::new());
    let second = created[1]["createdAt"].as_str().unwrap().replace('+', "%2B");
    let (_, page) = api.get(&format!("/v1/tasks?scopeId=history&createdAfter={second}")).await;
    assert_eq!(ids(&page), ["c1", "t2"], "createdAfter is inclusive");
    let (_, page) = api.get(&format!("/v1/tasks?runId={run}&createdBefore={second}&limit=1")).await;
    assert_eq!(ids(&page), ["t1"], "createdBefore is exclusive");
    // Another tenant's run lists nothing, whatever the filters.
    let (status, page) =
        stack.api("someone-else").get(&format!("/v1/tasks?runId={run}&kind=generate_text")).await;
    assert_eq!((status, ids(&page).len()), (200, 0), "{page}");

    for (query, path) in [
        (format!("runId={run}&kind=summarize"), "kind"),
        (format!("runId={run}&modelId="), "modelId"),
        ("scopeId=history&createdAfter=monday".to_owned(), "createdAfter"),
        ("scopeId=history&createdBefore=2026-01-01".to_owned(), "createdBefore"),
        ("effectKey=t1&kind=classify".to_owned(), "kind"),
    ] {
        let (status, answer) = api.get(&format!("/v1/tasks?{query}")).await;
        assert_eq!((status, error_code(&answer)), (400, "INVALID_REQUEST"), "{query}: {answer}");
        assert_eq!(answer["error"]["details"][0]["path"], path, "{query}: {answer}");
    }

    // Runs by scope.
    let (status, elsewhere) = api.post("/v1/runs", &json!({"scopeId": "elsewhere"})).await;
    assert_eq!(status, 201);
    let (listed, _) = all_runs(&api, "scopeId=elsewhere").await;
    let listed: Vec<&str> = listed.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(listed, [elsewhere["id"].as_str().unwrap()]);
    let (listed, _) = all_runs(&api, "scopeId=history").await;
    assert_eq!(listed.len(), 1);
    let (status, answer) = api.get("/v1/runs?scopeId=").await;
    assert_eq!((status, answer["error"]["details"][0]["path"].as_str()), (400, Some("scopeId")), "{answer}");
}
