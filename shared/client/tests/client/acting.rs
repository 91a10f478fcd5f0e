//! The calls that act on many tasks: a replay, operations and holds, each sent as docs/api.md
//! says (route, body, `Idempotency-Key`) and its answer read (201/202/200 told apart).

use std::time::Duration;

use aitasks_client::{
    all_operations, Error, HoldKind, HoldTarget, ListHolds, ListOperations, NewOperation, NewOperationFilter,
    OperationAction, OperationState, Outcome, Replay,
};
use futures::TryStreamExt;
use serde_json::{json, Value};

use crate::stub::{task_json, Answer, Stub, TASK_ID};

const OPERATION_ID: &str = "01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e1a";
const HOLD_ID: &str = "01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e2b";

fn operation_json(id: &str, state: &str, counts: [u64; 4]) -> Value {
    let [matched, done, skipped, failed] = counts;
    json!({
        "id": id, "action": "cancel", "filter": {"scopeId": "inbox", "status": ["queued", "running"]},
        "recompute": false, "state": state, "matched": matched, "done": done, "skipped": skipped,
        "failed": failed, "skippedBecause": if skipped > 0 { json!({"ALREADY_ENDED": skipped}) } else { json!({}) },
        "failedBecause": {}, "createdAt": "2026-02-01T10:00:00Z", "updatedAt": "2026-02-01T10:00:01Z",
        "endedAt": if state == "running" { Value::Null } else { json!("2026-02-01T10:00:02Z") }
    })
}

fn hold_json(id: &str, released: bool) -> Value {
    json!({
        "id": id, "target": {"profile": "fast"}, "kind": "manual", "reason": "provider down",
        "createdAt": "2026-02-01T10:00:00Z",
        "releasedAt": if released { json!("2026-02-01T11:00:00Z") } else { Value::Null },
        "releasedBy": if released { json!("person") } else { Value::Null }
    })
}

#[tokio::test]
async fn a_replay_posts_its_options_and_tells_a_new_task_from_the_one_its_key_found() {
    let mut replay = task_json("01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e3c", "queued");
    replay["replayOf"] = json!(TASK_ID);
    replay["effectKey"] = json!(format!("replay:{TASK_ID}"));
    let replays = json!({"replays": [{"id": replay["id"], "status": "queued", "effectKey": replay["effectKey"],
        "createdAt": "2026-12-03T10:00:00Z", "operationId": null}], "more": false});
    let stub = Stub::script(vec![
        Answer::json(201, replay.clone()),
        Answer::json(200, replay.clone()),
        Answer::json(200, replays),
        Answer::error(409, "TASK_NOT_ENDED"),
    ])
    .await;
    let client = stub.client(3);
    let id = TASK_ID.parse().unwrap();

    let first = client.replay(id, &Replay::default()).await.unwrap();
    assert_eq!((first.outcome, first.task.replay_of), (Outcome::Created, Some(id)));
    let asked = Replay { effect_key: Some("again".into()), recompute: true };
    let second = client.replay(id, &asked).await.unwrap();
    assert_eq!((second.outcome, second.task.id), (Outcome::Existing, first.task.id));
    let listed = client.replays(id).await.unwrap();
    assert_eq!(listed.replays.len(), 1);
    assert_eq!((listed.replays[0].id, listed.replays[0].operation_id), (first.task.id, None));
    let refused = client.replay(id, &Replay::default()).await.unwrap_err();
    assert_eq!((refused.status(), refused.code()), (Some(409), Some("TASK_NOT_ENDED")));

    let hits = stub.hits();
    let sent: Vec<(&str, &str, &Value)> =
        hits.iter().map(|h| (h.method.as_str(), h.target.as_str(), &h.body)).collect();
    let replay_path = format!("/v1/tasks/{TASK_ID}/replay");
    let replays_path = format!("/v1/tasks/{TASK_ID}/replays");
    assert_eq!(
        sent,
        [
            ("POST", replay_path.as_str(), &json!({})),
            ("POST", replay_path.as_str(), &json!({"effectKey": "again", "recompute": true})),
            ("GET", replays_path.as_str(), &Value::Null),
            ("POST", replay_path.as_str(), &json!({})),
        ]
    );
}

#[tokio::test]
async fn an_operations_create_sends_one_idempotency_key_per_call_the_same_on_every_retry() {
    let stub = Stub::script(vec![
        Answer::error(503, "UNAVAILABLE"),
        Answer::json(202, operation_json(OPERATION_ID, "running", [10, 4, 0, 0])),
        Answer::json(200, operation_json(OPERATION_ID, "running", [10, 6, 0, 0])),
        Answer::json(200, operation_json(OPERATION_ID, "running", [10, 6, 0, 0])),
    ])
    .await;
    let client = stub.client(3);
    let filter = NewOperationFilter {
        scope_id: Some("inbox".into()),
        kind: Some(aitasks_client::Kind::ExtractData),
        ..NewOperationFilter::default()
    };
    let cancel = NewOperation::cancel(filter);
    let made = client.create_operation(&cancel).await.unwrap();
    assert_eq!((made.outcome, made.operation.state), (Outcome::Created, OperationState::Running));
    assert_eq!((made.operation.matched, made.operation.done), (10, 4));
    let again = client.create_operation_with_key(&cancel, "nightly-cleanup").await.unwrap();
    assert_eq!((again.outcome, again.operation.id), (Outcome::Existing, made.operation.id));
    let other = client.create_operation(&cancel).await.unwrap();
    assert_eq!(other.outcome, Outcome::Existing);

    let hits = stub.hits();
    assert_eq!(hits.len(), 4);
    assert!(hits.iter().all(|h| (h.method.as_str(), h.target.as_str()) == ("POST", "/v1/operations")));
    assert_eq!(
        hits[0].body,
        json!({"action": "cancel", "filter": {"scopeId": "inbox", "kind": "extract_data"}})
    );
    let keys: Vec<String> = hits.iter().map(|h| h.idempotency_key.clone().unwrap()).collect();
    assert_eq!(keys[0], keys[1], "the retry after the 503 sent the first try's key");
    assert!(uuid::Uuid::parse_str(&keys[0]).is_ok(), "a random UUID: {}", keys[0]);
    assert_eq!(keys[2], "nightly-cleanup");
    assert_ne!(keys[3], keys[0], "another call, another key");
}

#[tokio::test]
async fn operations_are_listed_page_by_page_read_stopped_and_waited_for() {
    let second = "01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e1b";
    let stub = Stub::start(move |n, _| match n {
        0 => Answer::json(
            200,
            json!({"operations": [operation_json(OPERATION_ID, "running", [5, 1, 0, 0])],
                                       "next": OPERATION_ID}),
        ),
        1 => Answer::json(200, json!({"operations": [operation_json(second, "done", [3, 2, 1, 0])]})),
        2 => Answer::json(200, operation_json(OPERATION_ID, "stopped", [5, 2, 0, 0])),
        3 | 4 => Answer::json(200, operation_json(second, "running", [3, n as u64 - 2, 0, 0])),
        _ => Answer::json(200, operation_json(second, "done", [3, 2, 1, 0])),
    })
    .await;
    let client = stub.client(1);
    let listing = ListOperations { state: Some(OperationState::Running), limit: 1, ..all_operations() };
    let listed: Vec<_> = client.operations(listing).try_collect().await.unwrap();
    let ids: Vec<String> = listed.iter().map(|o| o.id.to_string()).collect();
    assert_eq!(ids, [OPERATION_ID, second]);
    assert_eq!(listed[1].skipped_because.get("ALREADY_ENDED"), Some(&1));

    let stopped = client.stop_operation(OPERATION_ID.parse().unwrap()).await.unwrap();
    assert_eq!((stopped.state, stopped.ended_at.is_some()), (OperationState::Stopped, true));

    let mut seen = Vec::new();
    let ended = client
        .wait_operation_with(
            second.parse().unwrap(),
            Duration::from_secs(30),
            Duration::from_millis(10),
            |o| seen.push(o.done),
        )
        .await
        .unwrap();
    assert_eq!((ended.state, ended.action), (OperationState::Done, OperationAction::Cancel));
    assert_eq!(seen, [1, 2, 2], "every read, until the operation was no longer running");

    let targets: Vec<String> =
        stub.hits().into_iter().map(|h| format!("{} {}", h.method, h.target)).collect();
    assert_eq!(
        targets,
        [
            "GET /v1/operations?state=running&limit=1".to_owned(),
            format!("GET /v1/operations?state=running&after={OPERATION_ID}&limit=1"),
            format!("POST /v1/operations/{OPERATION_ID}/stop"),
            format!("GET /v1/operations/{second}"),
            format!("GET /v1/operations/{second}"),
            format!("GET /v1/operations/{second}"),
        ]
    );
}

#[tokio::test]
async fn a_wait_on_an_operation_still_running_at_its_deadline_answers_it_as_last_read() {
    let stub =
        Stub::script(vec![Answer::json(200, operation_json(OPERATION_ID, "running", [7, 3, 0, 0]))]).await;
    let error = stub
        .client(1)
        .wait_operation_with(OPERATION_ID.parse().unwrap(), Duration::ZERO, Duration::from_millis(10), |_| {})
        .await
        .unwrap_err();
    let Error::OperationDeadline(operation) = error else { panic!("{error}") };
    assert_eq!((operation.state, operation.done), (OperationState::Running, 3));
}

#[tokio::test]
async fn a_hold_is_placed_listed_and_released_and_an_automatic_one_is_refused_with_its_code() {
    let stub = Stub::script(vec![
        Answer::json(201, hold_json(HOLD_ID, false)),
        Answer::json(200, hold_json(HOLD_ID, false)),
        Answer::json(200, json!({"holds": [hold_json(HOLD_ID, false)]})),
        Answer::json(200, hold_json(HOLD_ID, true)),
        Answer::error(409, "HOLD_IS_AUTOMATIC"),
    ])
    .await;
    let client = stub.client(1);
    let target = HoldTarget::Profile("fast".into());
    let held = client.create_hold(&target, Some("provider down")).await.unwrap();
    assert_eq!(
        (held.outcome, held.hold.kind, held.hold.is_active()),
        (Outcome::Created, HoldKind::Manual, true)
    );
    let again = client.create_hold(&HoldTarget::Scope("inbox".into()), None).await.unwrap();
    assert_eq!(again.outcome, Outcome::Existing);
    let listed: Vec<_> = client
        .holds(ListHolds { state: Some(aitasks_client::HoldState::Active), ..ListHolds::default() })
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    let released = client.release_hold(HOLD_ID.parse().unwrap()).await.unwrap();
    assert_eq!(released.released_by, Some(aitasks_client::ReleasedBy::Person));
    let refused = client.release_hold(HOLD_ID.parse().unwrap()).await.unwrap_err();
    assert_eq!((refused.status(), refused.code()), (Some(409), Some("HOLD_IS_AUTOMATIC")));

    let hits = stub.hits();
    assert_eq!(hits[0].body, json!({"profile": "fast", "reason": "provider down"}));
    assert_eq!(hits[1].body, json!({"scopeId": "inbox"}));
    let targets: Vec<String> = hits.iter().map(|h| format!("{} {}", h.method, h.target)).collect();
    assert_eq!(
        targets,
        [
            "POST /v1/holds".to_owned(),
            "POST /v1/holds".to_owned(),
            "GET /v1/holds?state=active&limit=100".to_owned(),
            format!("POST /v1/holds/{HOLD_ID}/release"),
            format!("POST /v1/holds/{HOLD_ID}/release"),
        ]
    );
}
