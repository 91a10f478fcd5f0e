//! Replaying one task (docs/api.md, "Replaying a task") through the dev server: a replay is a new
//! task with the original's request, owner and scope, admitted as a create; the original is never
//! touched; the same replay asked twice is one task; the original lists its replays.

use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-replays";

fn app_task(effect_key: &str) -> Value {
    json!({"owner": {"scopeId": "replays", "usageSubject": {"type": "user", "id": "u-1"}},
           "stepKey": "summary", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "generate_text", "prompt": "Summarize.", "input": {"text": effect_key}}})
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or_default()
}

/// What a replay must never change of its original: the task, its events and its attempts.
async fn looks(api: &Api, task_id: &str) -> (Value, Value, Value) {
    let (_, task) = api.get(&format!("/v1/tasks/{task_id}")).await;
    let (_, events) = api.get(&format!("/v1/tasks/{task_id}/events")).await;
    let (_, attempts) = api.get(&format!("/v1/tasks/{task_id}/attempts")).await;
    (task, events, attempts)
}

#[tokio::test]
async fn a_replay_is_a_new_task_and_the_original_is_untouched() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let (status, original) = api.post("/v1/tasks", &app_task("o-1")).await;
    assert_eq!(status, 201, "{original}");
    let id = original["id"].as_str().unwrap().to_owned();
    assert_eq!(api.wait_terminal(&id).await["status"], "succeeded");
    let before = looks(&api, &id).await;
    assert_eq!(before.1["events"].as_array().unwrap().len(), 1, "{}", before.1);
    assert!(before.0.get("replayOf").is_none(), "only a replay names an original");

    let (status, replay) = api.post(&format!("/v1/tasks/{id}/replay"), &json!({})).await;
    assert_eq!(status, 201, "{replay}");
    let replay_id = replay["id"].as_str().unwrap().to_owned();
    assert_ne!(replay_id, id);
    assert_eq!(replay["replayOf"], json!(id));
    assert_eq!(replay["effectKey"], json!(format!("replay:{id}")));
    for same in ["request", "modelId", "stepKey", "scopeId", "usageSubject", "kind"] {
        assert_eq!(replay[same], before.0[same], "{same}");
    }
    let ran = api.wait_terminal(&replay_id).await;
    assert_eq!((ran["status"].as_str(), ran["attempts"].as_i64()), (Some("succeeded"), Some(1)), "{ran}");
    assert_eq!(stack.stub.calls(), 2, "the replay called the provider itself");
    assert_eq!(looks(&api, &id).await, before, "the original is untouched");

    // Asked again: the same task (its derived key), 200; an empty body is the same ask.
    let again = api.send(reqwest::Method::POST, &format!("/v1/tasks/{id}/replay"), None).await;
    assert_eq!((again.status, &again.body["id"]), (200, &json!(replay_id)), "{}", again.body);
    // With a key of the caller's: another replay.
    let (status, keyed) = api.post(&format!("/v1/tasks/{id}/replay"), &json!({"effectKey": "again-1"})).await;
    assert_eq!((status, keyed["effectKey"].as_str()), (201, Some("again-1")), "{keyed}");
    assert_eq!(keyed["replayOf"], json!(id));
    api.wait_terminal(keyed["id"].as_str().unwrap()).await;
    // A replay of a replay names that replay.
    let (status, chained) = api.post(&format!("/v1/tasks/{replay_id}/replay"), &json!({})).await;
    assert_eq!((status, &chained["replayOf"]), (201, &json!(replay_id)), "{chained}");
    api.wait_terminal(chained["id"].as_str().unwrap()).await;

    let (status, history) = api.get(&format!("/v1/tasks/{id}/replays")).await;
    assert_eq!(status, 200, "{history}");
    let listed: Vec<&str> =
        history["replays"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(listed, [replay_id.as_str(), keyed["id"].as_str().unwrap()], "oldest first: {history}");
    assert_eq!(history["replays"][0]["effectKey"], json!(format!("replay:{id}")));
    assert_eq!(history["replays"][0]["status"], "succeeded");
    assert_eq!(history["replays"][0]["operationId"], Value::Null);
    assert_eq!(history["more"], false);
    assert_eq!(looks(&api, &id).await, before, "still untouched");

    // Another tenant's task, a missing one and an id that is no UUID: 404, nothing made.
    let other = stack.api("app-replays-other");
    for path in [
        format!("/v1/tasks/{id}/replay"),
        format!("/v1/tasks/{}/replay", uuid::Uuid::now_v7()),
        "/v1/tasks/nope/replay".into(),
    ] {
        let (status, answer) = other.post(&path, &json!({})).await;
        assert_eq!((status, code(&answer)), (404, "NOT_FOUND"), "{path}: {answer}");
    }
    assert_eq!(other.get(&format!("/v1/tasks/{id}/replays")).await.0, 404);
    // A body with an unknown field: 400, nothing made.
    let (status, answer) = api.post(&format!("/v1/tasks/{id}/replay"), &json!({"callback": {}})).await;
    assert_eq!((status, code(&answer)), (400, "INVALID_REQUEST"), "{answer}");
    assert_eq!(stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await, 4);
}

#[tokio::test]
async fn a_task_still_running_or_of_a_canceled_run_is_not_replayed() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    stack.stub.script([Reply::slow(Duration::from_secs(60))]);
    let (_, run) = api.post("/v1/runs", &json!({"scopeId": "replays"})).await;
    let run_id = run["id"].as_str().unwrap().to_owned();
    let body = json!({"runId": run_id, "stepKey": "s", "effectKey": "r-1", "modelId": "default",
                      "request": {"kind": "generate_text", "prompt": "Summarize."}});
    let (status, task) = api.post("/v1/tasks", &body).await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    api.wait_for(&id, |t| t["status"] == "running").await;
    let (status, answer) = api.post(&format!("/v1/tasks/{id}/replay"), &json!({})).await;
    assert_eq!((status, code(&answer)), (409, "TASK_NOT_ENDED"), "{answer}");

    assert_eq!(api.post(&format!("/v1/runs/{run_id}/cancel"), &json!({})).await.0, 200);
    assert_eq!(api.wait_terminal(&id).await["status"], "canceled");
    let (status, answer) = api.post(&format!("/v1/tasks/{id}/replay"), &json!({})).await;
    assert_eq!((status, code(&answer)), (409, "WORKFLOW_AI_RUN_UNAVAILABLE"), "{answer}");
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks WHERE replay_of IS NOT NULL").await, 0);
}

#[tokio::test]
async fn a_scoped_replay_hits_the_result_cache_unless_it_recomputes() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let mut body = app_task("s-1");
    body["scope"] = json!({"sourceId": "doc-1", "sourceRevision": "r1",
        "budget": {"burst": 10, "tasksPerMinute": 60, "maxStepsPerSource": 20,
                   "sourcesPer24Hours": 100, "scopeConcurrent": 4, "globalConcurrent": 100}});
    let (status, original) = api.post("/v1/tasks", &body).await;
    assert_eq!(status, 201, "{original}");
    let id = original["id"].as_str().unwrap().to_owned();
    let done = api.wait_terminal(&id).await;
    assert_eq!(done["status"], "succeeded");

    let (status, hit) = api.post(&format!("/v1/tasks/{id}/replay"), &json!({})).await;
    assert_eq!(status, 201, "{hit}");
    assert_eq!(
        (hit["status"].as_str(), hit["attempts"].as_i64()),
        (Some("succeeded"), Some(0)),
        "a hit: {hit}"
    );
    assert_eq!((&hit["output"], &hit["replayOf"]), (&done["output"], &json!(id)));
    assert_eq!(stack.stub.calls(), 1, "no provider call for a hit");

    let (status, fresh) =
        api.post(&format!("/v1/tasks/{id}/replay"), &json!({"effectKey": "fresh", "recompute": true})).await;
    assert_eq!((status, fresh["status"].as_str()), (201, Some("queued")), "{fresh}");
    let ran = api.wait_terminal(fresh["id"].as_str().unwrap()).await;
    assert_eq!((ran["status"].as_str(), ran["attempts"].as_i64()), (Some("succeeded"), Some(1)), "{ran}");
    assert_eq!(stack.stub.calls(), 2, "recompute called the provider");
}
