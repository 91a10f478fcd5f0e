//! `POST /v1/tasks/batch` and `GET /v1/tasks?runId=|scopeId=` through the dev server: every item
//! answered as its own create would be, idempotent per item, each new task worked to its end;
//! and keyset pages that walk a run or a scope exactly once.

use std::collections::BTreeSet;
use std::time::Duration;

use aitasks_testkit::*;
use reqwest::Method;
use serde_json::{json, Value};

const APP: &str = "app-batch";

fn run_item(run_id: &str, effect_key: &str) -> Value {
    json!({"runId": run_id, "stepKey": "summary", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "generate_text", "prompt": "Summarize.", "input": {"text": effect_key}}})
}

fn app_item(effect_key: &str) -> Value {
    json!({"owner": {"scopeId": "inbox"}, "stepKey": "label", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Spam?", "input": effect_key, "choices": ["spam", "ham"]}})
}

fn scoped_item(effect_key: &str, source: &str) -> Value {
    json!({"owner": {"scopeId": "inbox"}, "stepKey": "label", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Spam?", "input": source, "choices": ["spam", "ham"]},
           "scope": {"sourceId": source, "sourceRevision": "r1",
                     "budget": {"burst": 1, "tasksPerMinute": 1, "maxStepsPerSource": 10, "sourcesPer24Hours": 10,
                                "scopeConcurrent": 10, "globalConcurrent": 100}}})
}

async fn new_run(api: &Api) -> String {
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "inbox"})).await;
    assert_eq!(status, 201, "{run}");
    run["id"].as_str().expect("run id").to_owned()
}

fn statuses(answer: &Value) -> Vec<u64> {
    answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["status"].as_u64().expect("status"))
        .collect()
}

#[tokio::test]
async fn every_item_is_answered_as_its_own_create_and_each_new_task_ends() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let run = new_run(&api).await;
    let canceled_run = new_run(&api).await;
    assert_eq!(api.post(&format!("/v1/runs/{canceled_run}/cancel"), &json!({})).await.0, 200);
    let (status, earlier) = api.post("/v1/tasks", &app_item("earlier")).await;
    assert_eq!(status, 201);

    let mut too_large = app_item("large");
    too_large["request"]["input"] = json!("x".repeat(120_000));
    let mut unknown_model = app_item("unknown-model");
    unknown_model["modelId"] = json!("no-such-model");
    let mut both_owners = run_item(&run, "both");
    both_owners["owner"] = json!({"scopeId": "inbox"});
    let items = vec![
        run_item(&run, "r/1"),                                 // 201
        app_item("a/1"),                                       // 201
        app_item("a/1"),                                       // 200: the item before's task
        app_item("earlier"),                                   // 200: the single create's task
        both_owners,                                           // 400
        unknown_model,                                         // 400 AI_MODEL_UNKNOWN
        too_large,                                             // 413
        run_item(&uuid::Uuid::now_v7().to_string(), "no-run"), // 404
        run_item(&canceled_run, "canceled-run"),               // 409
        scoped_item("s/1", "doc-1"),                           // 201
        scoped_item("s/2", "doc-1"),                           // 429: burst 1, tasksPerMinute 1
        json!("not an object"),                                // 400
    ];
    let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(statuses(&answer), [201, 201, 200, 200, 400, 400, 413, 404, 409, 201, 429, 400], "{answer}");
    let results = answer["results"].as_array().unwrap();
    let code = |i: usize| results[i]["error"]["code"].as_str().unwrap_or_default().to_owned();
    assert_eq!(code(4), "INVALID_REQUEST");
    assert!(results[4]["error"]["details"].as_array().is_some_and(|d| !d.is_empty()), "details say why");
    assert_eq!(
        [code(5), code(6), code(7), code(8), code(10)],
        [
            "AI_MODEL_UNKNOWN",
            "AI_TASK_INPUT_TOO_LARGE",
            "NOT_FOUND",
            "WORKFLOW_AI_RUN_UNAVAILABLE",
            "WORKFLOW_AI_RATE_LIMIT"
        ]
    );
    assert!(results[10]["error"]["retryAfter"].as_u64().is_some_and(|s| s >= 1), "{}", results[10]);
    assert_eq!(results[2]["task"]["id"], results[1]["task"]["id"], "one key, one task");
    assert_eq!(results[3]["task"]["id"], earlier["id"]);
    assert_eq!(results[0]["task"]["runId"].as_str(), Some(run.as_str()));
    assert_eq!(results[0]["task"]["status"], "queued");
    let created: Vec<String> =
        [0, 1, 9].iter().map(|&i| results[i]["task"]["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await,
        4,
        "the earlier task and the batch's three; nothing for a refused item"
    );
    for id in &created {
        let task = api.wait_terminal(id).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        assert_eq!(task["attempts"], 1, "each message was sent once and worked once: {task}");
    }

    // The same batch again: every stored item is now its existing task, every refusal the same.
    let (_, again) = api.post("/v1/tasks/batch", &json!({"tasks": answer_items(&run, &canceled_run)})).await;
    assert_eq!(statuses(&again), [200, 200, 200, 404, 409, 200]);
    let again = again["results"].as_array().unwrap();
    assert_eq!(again[0]["task"]["id"], results[0]["task"]["id"]);
    assert_eq!(again[0]["task"]["status"], "succeeded");
    assert_eq!(again[5]["task"]["id"], results[9]["task"]["id"]);
    assert_eq!(stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await, 4);
}

fn answer_items(run: &str, canceled_run: &str) -> Vec<Value> {
    vec![
        run_item(run, "r/1"),
        app_item("a/1"),
        app_item("earlier"),
        run_item(&uuid::Uuid::now_v7().to_string(), "no-run"),
        run_item(canceled_run, "canceled-run"),
        scoped_item("s/1", "doc-1"),
    ]
}

#[tokio::test]
async fn the_whole_request_is_refused_only_for_what_no_item_can_answer() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    for (body, why) in [
        (json!({"tasks": []}), "empty"),
        (json!({"tasks": vec![app_item("x"); 1001]}), "over 1000 items"),
        (json!({"items": [app_item("x")]}), "no tasks"),
        (json!([app_item("x")]), "not an object"),
    ] {
        let (status, answer) = api.post("/v1/tasks/batch", &body).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{why}: {answer}"
        );
    }
    let answer = api.send(Method::POST, "/v1/tasks/batch", Some(b"{\"tasks\": [".to_vec())).await;
    assert_eq!(answer.status, 400, "not JSON");
    let huge = json!({"tasks": (0..70).map(|i| { let mut item = app_item(&format!("h{i}")); item["request"]["input"] = json!("y".repeat(90_000)); item }).collect::<Vec<_>>()});
    let (status, answer) = api.post("/v1/tasks/batch", &huge).await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (413, Some("AI_TASK_INPUT_TOO_LARGE")),
        "over 6 MB"
    );
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 0, "nothing stored");
    let unauthorized = api.with_token(None);
    assert_eq!(unauthorized.post("/v1/tasks/batch", &json!({"tasks": [app_item("x")]})).await.0, 401);
}

#[tokio::test]
async fn a_thousand_items_land_and_pages_walk_the_run_and_the_scope_exactly_once() {
    let stack = Stack::start().await;
    stack.stub.set_default(Reply::slow(Duration::from_secs(60)));
    let api = stack.api(APP);
    let run = new_run(&api).await;
    let items: Vec<Value> = (0..1000).map(|i| run_item(&run, &format!("k/{i:04}"))).collect();
    let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
    assert_eq!(status, 200);
    assert!(statuses(&answer).iter().all(|&s| s == 201), "all new");
    let ids: Vec<String> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["task"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        stack.db.count(&format!("SELECT count(*) FROM tasks WHERE run_id = '{run}' AND status = 'queued' AND message_sent_at IS NULL")).await,
        0,
        "every message sent and marked (a task already claimed is running)"
    );

    // Pages of 100 walk the run in creation order, each task once.
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut path = format!("/v1/tasks?runId={run}&limit=100");
        if let Some(after) = &after {
            path.push_str(&format!("&after={after}"));
        }
        let (status, page) = api.get(&path).await;
        assert_eq!(status, 200, "{page}");
        let tasks = page["tasks"].as_array().unwrap();
        assert!(tasks.len() <= 100, "a page holds at most 100 tasks");
        seen.extend(tasks.iter().map(|t| t["id"].as_str().unwrap().to_owned()));
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "every task once, in id (creation) order");
    assert_eq!(seen.iter().collect::<BTreeSet<_>>().len(), 1000);

    // The scope and a status: the tasks being worked are running, the rest queued.
    let (_, first) = api.get("/v1/tasks?scopeId=inbox&limit=5").await;
    assert_eq!(first["tasks"].as_array().unwrap().len(), 5);
    assert_eq!(first["tasks"][0]["id"].as_str(), Some(sorted[0].as_str()), "the scope holds its run's tasks");
    // A status filter looks at 1,000 of the run's tasks an answer at most (docs/api.md): none is
    // canceled, so the first answer is empty with a `next` (the 1,000th task looked at), and the
    // one after it, with nothing left to look at, has none.
    let mut answers = 0;
    let mut after: Option<String> = None;
    loop {
        let mut path = format!("/v1/tasks?runId={run}&status=canceled");
        if let Some(after) = &after {
            path.push_str(&format!("&after={after}"));
        }
        let (_, canceled) = api.get(&path).await;
        assert_eq!(canceled["tasks"], json!([]), "{canceled}");
        answers += 1;
        match canceled["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(answers, 2, "1,000 tasks looked at in the first answer, none left for the second");
    assert_eq!(api.post(&format!("/v1/runs/{run}/cancel"), &json!({})).await.0, 200);
    let (_, canceled) = api.get(&format!("/v1/tasks?runId={run}&status=canceled&limit=100")).await;
    assert_eq!(canceled["tasks"].as_array().unwrap().len(), 100);
    assert!(canceled["tasks"].as_array().unwrap().iter().all(|t| t["status"] == "canceled"));

    // Another application sees none of it; a query that names no owner, or two, is refused.
    assert_eq!(stack.api("someone-else").get(&format!("/v1/tasks?runId={run}")).await.1["tasks"], json!([]));
    for bad in [
        "/v1/tasks".to_owned(),
        format!("/v1/tasks?runId={run}&scopeId=inbox"),
        format!("/v1/tasks?runId={run}&effectKey=k/0001"),
        "/v1/tasks?effectKey=k/0001&status=queued".to_owned(),
        "/v1/tasks?runId=not-a-uuid".to_owned(),
        "/v1/tasks?scopeId=inbox&status=done".to_owned(),
        "/v1/tasks?scopeId=inbox&limit=0".to_owned(),
        "/v1/tasks?scopeId=inbox&after=x".to_owned(),
        "/v1/tasks?scopeId=".to_owned(),
    ] {
        let (status, answer) = api.get(&bad).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{bad}: {answer}"
        );
    }
}

fn scoped_in(scope_id: &str, effect_key: &str, burst: u64) -> Value {
    let mut item = scoped_item(effect_key, &format!("doc-{effect_key}"));
    item["owner"]["scopeId"] = json!(scope_id);
    item["scope"]["budget"]["burst"] = json!(burst);
    item["scope"]["budget"]["tasksPerMinute"] = json!(burst);
    item
}

/// docs/api.md: a key given twice in one batch makes one task, the later item answering 200
/// with it. The first valid item creates it whatever the kinds (a scoped item is stored in its
/// own transaction, plain ones in one statement), and a first item that is refused leaves the
/// key to the next, as if that one had been sent after it.
#[tokio::test]
async fn a_key_given_twice_is_created_by_its_first_valid_item_whatever_the_kinds() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let no_run = uuid::Uuid::now_v7().to_string();
    let items = vec![
        scoped_in("scope-a", "scoped-first", 10),    // 201
        app_item("scoped-first"),                    // 200: the scoped item's task
        app_item("plain-first"),                     // 201
        scoped_in("scope-b", "plain-first", 10),     // 200: the plain item's task
        run_item(&no_run, "refused-first"),          // 404
        scoped_in("scope-c", "refused-first", 10),   // 201
        scoped_in("scope-d", "spends-the-burst", 1), // 201
        scoped_in("scope-d", "limited-first", 1),    // 429: scope-d's burst is spent
        app_item("limited-first"),                   // 201
        app_item("limited-first"),                   // 200
    ];
    let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(statuses(&answer), [201, 200, 201, 200, 404, 201, 201, 429, 201, 200], "{answer}");
    let id = |i: usize| answer["results"][i]["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(id(1), id(0));
    assert_eq!(id(3), id(2));
    assert_eq!(id(9), id(8));
    let plain =
        |key: &str| format!("SELECT count(*) FROM tasks WHERE effect_key = '{key}' AND source_id IS NULL");
    assert_eq!(stack.db.count(&plain("plain-first")).await, 1, "the plain item's task, not the scoped one's");
    assert_eq!(stack.db.count(&plain("scoped-first")).await, 0, "the scoped item's task");
    assert_eq!(stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await, 5);
}
