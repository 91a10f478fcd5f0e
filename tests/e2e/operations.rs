//! Operations (docs/api.md, "Operations") through the dev server: cancel or replay every task of
//! a tenant that matches a filter, in bounded pages, by the request and then the sweeper's
//! `operations` duty. Exact counts; a key names one operation; a tenant's limit; stop; another
//! tenant's operation is a 404; two operations over one run leave each task in the documented
//! state; a runner killed mid-operation resumes and acts on no task twice.

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-operations";

fn task(owner: Value, effect_key: &str) -> Value {
    let mut body = json!({"stepKey": "s", "effectKey": effect_key, "modelId": "default",
                          "request": {"kind": "generate_text", "prompt": "Summarize."}});
    match owner {
        Value::String(run_id) => body["runId"] = json!(run_id),
        owner => body["owner"] = owner,
    }
    body
}

/// `count` queued tasks of `owner` (a run id as a string, or `{"scopeId": s}`), a thousand a
/// bulk create, every item created.
async fn create_many(api: &Api, owner: Value, prefix: &str, count: usize) {
    for start in (0..count).step_by(1_000) {
        let items: Vec<Value> = (start..count.min(start + 1_000))
            .map(|i| task(owner.clone(), &format!("{prefix}-{i}")))
            .collect();
        let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
        assert_eq!(status, 200, "{answer}");
        let created =
            answer["results"].as_array().unwrap().iter().filter(|item| item["status"] == 201).count();
        assert_eq!(created, items.len(), "{answer}");
    }
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or_default()
}

async fn wait_ended(api: &Api, id: &str) -> Value {
    wait_for(&format!("operation {id} to end"), || async {
        let (status, operation) = api.get(&format!("/v1/operations/{id}")).await;
        assert_eq!(status, 200, "{operation}");
        (operation["state"] != "running").then_some(operation)
    })
    .await
}

fn counts(operation: &Value) -> [i64; 4] {
    ["matched", "done", "skipped", "failed"].map(|name| operation[name].as_i64().unwrap())
}

#[tokio::test]
async fn an_operation_is_one_per_key_within_its_tenants_limit_and_can_be_stopped() {
    // No workers, one page a request, no sweeper turn during the test: an operation over more
    // than a page stays running until it is stopped.
    let stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "0"),
        ("AITASK_REQUEST_PAGE", "5"),
        ("AITASK_REQUEST_WORK_MS", "0"),
        ("AITASK_SWEEP_INTERVAL_MS", "600000"),
        ("AITASK_OPERATIONS_PER_TENANT", "1"),
    ])
    .await;
    let api = stack.api(APP);
    create_many(&api, json!({"scopeId": "big"}), "big", 30).await;
    create_many(&api, json!({"scopeId": "small"}), "small", 3).await;

    let (status, big) = api
        .post_keyed("/v1/operations", None, &json!({"action": "cancel", "filter": {"scopeId": "big"}}))
        .await;
    assert_eq!((status, big["state"].as_str()), (202, Some("running")), "{big}");
    assert_eq!(counts(&big), [5, 5, 0, 0], "the request's one page: {big}");
    let big_id = big["id"].as_str().unwrap().to_owned();
    let small_body = json!({"action": "cancel", "filter": {"scopeId": "small"}});
    let (status, answer) = api.post_keyed("/v1/operations", None, &small_body).await;
    assert_eq!((status, code(&answer)), (429, "WORKFLOW_AI_OPERATIONS_LIMIT"), "{answer}");

    // Another tenant's operation is none of its business.
    let other = stack.api("app-operations-other");
    assert_eq!(other.get(&format!("/v1/operations/{big_id}")).await.0, 404);
    assert_eq!(other.post(&format!("/v1/operations/{big_id}/stop"), &json!({})).await.0, 404);
    assert_eq!(other.get("/v1/operations").await.1["operations"], json!([]));

    let (status, stopped) = api.post(&format!("/v1/operations/{big_id}/stop"), &json!({})).await;
    assert_eq!((status, stopped["state"].as_str()), (200, Some("stopped")), "{stopped}");
    assert!(stopped["endedAt"].is_string());
    assert_eq!(
        stack.db.count("SELECT count(*) FROM tasks WHERE scope_id = 'big' AND status = 'canceled'").await,
        5
    );

    // With a key: done within its page; the same key and body again is the same operation.
    let key = "ops-key-1";
    let (status, small) = api.post_keyed("/v1/operations", Some(key), &small_body).await;
    assert_eq!((status, small["state"].as_str()), (202, Some("done")), "{small}");
    assert_eq!(counts(&small), [3, 3, 0, 0]);
    let (status, again) = api.post_keyed("/v1/operations", Some(key), &small_body).await;
    assert_eq!((status, &again["id"]), (200, &small["id"]), "{again}");
    let (status, answer) = api
        .post_keyed("/v1/operations", Some(key), &json!({"action": "replay", "filter": {"scopeId": "small"}}))
        .await;
    assert_eq!((status, code(&answer)), (422, "IDEMPOTENCY_KEY_REUSED"), "{answer}");
    // Ended, it is cancel's to skip now.
    let (status, twice) = api
        .post_keyed(
            "/v1/operations",
            None,
            &json!({"action": "cancel", "filter": {"scopeId": "small", "status": ["canceled"]}}),
        )
        .await;
    assert_eq!(status, 202, "{twice}");
    assert_eq!((counts(&twice), &twice["skippedBecause"]), ([3, 0, 3, 0], &json!({"ALREADY_ENDED": 3})));

    // Bad filters: 400 naming the parameter, nothing stored.
    for (body, path) in [
        (json!({"action": "cancel", "filter": {"runId": "nope"}}), "filter.runId"),
        (
            json!({"action": "cancel", "filter": {"runId": uuid::Uuid::now_v7(), "scopeId": "s"}}),
            "filter.scopeId",
        ),
        (json!({"action": "cancel", "filter": {"status": ["finished"]}}), "filter.status[0]"),
        (json!({"action": "cancel", "filter": {"kind": "poem"}}), "filter.kind"),
        (json!({"action": "cancel", "filter": {"createdAfter": "today"}}), "filter.createdAfter"),
        (json!({"action": "cancel", "filter": {}, "recompute": true}), "recompute"),
        (json!({"action": "delete", "filter": {}}), "action"),
    ] {
        let (status, answer) = api.post_keyed("/v1/operations", None, &body).await;
        assert_eq!((status, code(&answer)), (400, "INVALID_REQUEST"), "{body}: {answer}");
        assert_eq!(answer["error"]["details"][0]["path"], path, "{answer}");
    }
    let (status, answer) = api.get("/v1/operations?state=later&limit=0").await;
    assert_eq!(status, 400, "{answer}");

    let (_, listed) = api.get("/v1/operations").await;
    let ids: Vec<&str> =
        listed["operations"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [big_id.as_str(), small["id"].as_str().unwrap(), twice["id"].as_str().unwrap()]);
    let (_, page) = api.get("/v1/operations?state=stopped&limit=1").await;
    assert_eq!(page["operations"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["operations"][0]["id"], json!(big_id));
    assert_eq!(stack.db.count("SELECT count(*) FROM operations").await, 3);

    // Every task of the tenant, in creation order: the first page holds the five canceled first.
    let everything = json!({"action": "cancel", "filter": {"status": ["canceled"]}});
    let (status, all) = api.post_keyed("/v1/operations", None, &everything).await;
    assert_eq!((status, all["state"].as_str()), (202, Some("running")), "{all}");
    assert_eq!((counts(&all), &all["skippedBecause"]), ([5, 0, 5, 0], &json!({"ALREADY_ENDED": 5})), "{all}");
}

#[tokio::test]
async fn a_cancel_and_a_replay_over_one_run_leave_each_task_in_the_documented_state() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_REQUEST_PAGE", "7")]).await;
    let api = stack.api(APP);
    let (_, run) = api.post("/v1/runs", &json!({"scopeId": "overlap"})).await;
    let run_id = run["id"].as_str().unwrap().to_owned();
    create_many(&api, json!(run_id), "t", 40).await;
    let filter = json!({"runId": run_id, "status": ["queued", "canceled"]});
    let cancel_body = json!({"action": "cancel", "filter": {"runId": run_id}});
    let replay_body = json!({"action": "replay", "filter": filter});
    let (cancel, replay) = tokio::join!(
        api.post_keyed("/v1/operations", None, &cancel_body),
        api.post_keyed("/v1/operations", None, &replay_body),
    );
    assert_eq!((cancel.0, replay.0), (202, 202), "{cancel:?} {replay:?}");
    let cancel = wait_ended(&api, cancel.1["id"].as_str().unwrap()).await;
    let replay = wait_ended(&api, replay.1["id"].as_str().unwrap()).await;

    // The rule (docs/api.md, "Operations"): each operation acts on each task it matched once, as
    // the task is when its page reaches it. Every original ends canceled; the replay replayed
    // those it reached after the cancel did and skipped the others as NOT_ENDED; a replay is a
    // new task neither operation matches.
    assert_eq!(counts(&cancel), [40, 40, 0, 0], "{cancel}");
    let replayed = replay["done"].as_i64().unwrap();
    assert_eq!(replay["matched"], 40, "{replay}");
    assert_eq!(replayed + replay["skippedBecause"]["NOT_ENDED"].as_i64().unwrap_or(0), 40, "{replay}");
    assert_eq!(replay["failed"], 0, "{replay}");
    let originals = format!("run_id = '{run_id}' AND replay_of IS NULL");
    assert_eq!(
        stack
            .db
            .count(&format!("SELECT count(*) FROM tasks WHERE {originals} AND status = 'canceled'"))
            .await,
        40
    );
    assert_eq!(
        stack.db.count("SELECT count(*) FROM tasks WHERE replay_of IS NOT NULL AND status = 'queued'").await,
        replayed
    );
    assert_eq!(
        stack.db.count("SELECT count(DISTINCT replay_of) FROM tasks").await,
        replayed,
        "one replay per original"
    );
    assert_eq!(stack.db.count("SELECT count(*) FROM (SELECT task_id FROM task_events GROUP BY task_id HAVING count(*) > 1) twice").await, 0);
}

#[tokio::test]
async fn operations_over_20000_tasks_count_exactly_across_a_killed_runner() {
    // One page a request and one a sweep: the operations last long enough to be killed midway.
    let mut stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "0"),
        ("AITASK_REQUEST_WORK_MS", "0"),
        ("AITASK_SWEEP_MAX_PAGES", "1"),
    ])
    .await;
    let api = stack.api(APP);
    const N: i64 = 20_000;
    create_many(&api, json!({"scopeId": "bulk"}), "bulk", N as usize).await;

    for body in [
        json!({"action": "cancel", "filter": {"scopeId": "bulk"}}),
        json!({"action": "replay", "filter": {"scopeId": "bulk"}}),
    ] {
        let (status, operation) = api.post_keyed("/v1/operations", None, &body).await;
        assert_eq!(status, 202, "{operation}");
        let id = operation["id"].as_str().unwrap().to_owned();
        // Killed (SIGKILL) once some pages are done and others are not; started again.
        wait_for(&format!("operation {id} halfway"), || async {
            let (_, operation) = api.get(&format!("/v1/operations/{id}")).await;
            assert_eq!(operation["state"], "running", "ended before the kill: {operation}");
            (operation["done"].as_i64().unwrap() >= 2_000).then_some(())
        })
        .await;
        stack.server.restart().await;
        let ended = wait_ended(&api, &id).await;
        assert_eq!((ended["state"].as_str(), counts(&ended)), (Some("done"), [N, N, 0, 0]), "{ended}");
    }
    let count = |sql: &'static str| stack.db.count(sql);
    assert_eq!(count("SELECT count(*) FROM tasks WHERE scope_id = 'bulk' AND replay_of IS NULL AND status = 'canceled'").await, N);
    // Each original canceled once (one completion event) and replayed once, by the operation.
    assert_eq!(count("SELECT count(*) FROM (SELECT task_id FROM task_events GROUP BY task_id HAVING count(*) > 1) twice").await, 0);
    assert_eq!(count("SELECT count(*) FROM task_events").await, N);
    assert_eq!(
        count("SELECT count(*) FROM tasks WHERE replay_of IS NOT NULL AND replay_operation IS NOT NULL")
            .await,
        N
    );
    assert_eq!(count("SELECT count(DISTINCT replay_of) FROM tasks").await, N);
    assert_eq!(count("SELECT count(*) FROM task_replays").await, N);
}
