//! Callbacks against a real Postgres: owed by whatever ends their task (the outbox's trigger),
//! taken with a lease, recorded, heartbeated, and the tasks nobody waits for any more canceled.

use std::time::Duration;

use aitasks_contracts::{ErrorCode, TaskStatus};
use aitasks_store::{self as store, CallbackEnd, Claim, NewCallback};
use aitasks_testkit::*;
use serde_json::json;
use uuid::Uuid;

const LEASE: Duration = Duration::from_secs(60);

fn step_functions(task_id: Uuid, token: &str) -> NewCallback<'_> {
    NewCallback { task_id, kind: "step_functions", token }
}

async fn states(db: &TestDb, task_id: Uuid) -> Vec<String> {
    let client = db.client().await;
    client
        .query("SELECT state FROM task_callbacks WHERE task_id = $1 ORDER BY id", &[&task_id])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

async fn queued(db: &TestDb, key: &str) -> Uuid {
    let client = db.client().await;
    store::create_task(&client, &new_task(APP, app_owner("s"), key)).await.unwrap().task().id
}

#[tokio::test]
async fn a_callback_waits_is_owed_when_its_task_ends_and_is_answered_once() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task_id = queued(&db, "k").await;
    let owed_now = store::attach_callbacks(&client, &[step_functions(task_id, "tok-1")]).await.unwrap();
    assert!(owed_now.is_empty(), "the task has not ended");
    // The same token again (a caller repeating its create) is the same callback.
    store::attach_callbacks(&client, &[step_functions(task_id, "tok-1")]).await.unwrap();
    assert_eq!(states(&db, task_id).await, ["waiting"]);

    let Claim::Claimed(task) = claim_one(&client, task_id).await else { panic!("claim") };
    let event =
        match store::complete_attempt(&client, task.lease(), &json!("pos"), None, false).await.unwrap() {
            store::Fenced::Written(event) => event,
            store::Fenced::Lost => panic!("the attempt completes"),
        };
    assert_eq!(states(&db, task_id).await, ["owed"], "owed in the statement that ended the task");

    // The publisher marks the event and takes the callback with its task's answer, in one statement.
    let taken = store::mark_delivered_and_take_owed(&client, &[event.id], &[task_id], LEASE).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!((taken[0].token.as_str(), taken[0].tries), ("tok-1", 1));
    assert_eq!(taken[0].end.status, TaskStatus::Succeeded);
    assert_eq!(taken[0].end.output, Some(json!("pos")));
    assert!(!format!("{:?}", taken[0]).contains("tok-1"), "a debug print leaves the token out");
    assert_eq!(db.count("SELECT count(*) FROM task_events WHERE delivered_at IS NOT NULL").await, 1);
    // Held: neither the sweeper nor another publisher takes it while its call is in flight.
    assert!(store::take_owed_callbacks(&client, LEASE, 10).await.unwrap().is_empty());
    assert!(store::mark_delivered_and_take_owed(&client, &[], &[task_id], LEASE).await.unwrap().is_empty());

    assert_eq!(store::record_callbacks(&client, &[(taken[0].id, CallbackEnd::Delivered)]).await.unwrap(), 1);
    assert_eq!(states(&db, task_id).await, ["delivered"]);
    assert_eq!(
        db.count("SELECT count(*) FROM task_callbacks WHERE token IS NOT NULL").await,
        0,
        "token cleared"
    );
    // A late record of a duplicate call changes nothing.
    let late = CallbackEnd::Gone("TaskTimedOut".into());
    assert_eq!(store::record_callbacks(&client, &[(taken[0].id, late)]).await.unwrap(), 0);
    assert_eq!(states(&db, task_id).await, ["delivered"]);
}

#[tokio::test]
async fn a_sender_that_died_is_replaced_after_the_lease_and_retries_wait_their_backoff() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task_id = queued(&db, "k").await;
    store::attach_callbacks(&client, &[step_functions(task_id, "tok")]).await.unwrap();
    store::request_cancel(&client, APP, task_id).await.unwrap();
    let first = store::take_owed_callbacks(&client, LEASE, 10).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].end.error_code.as_deref(), Some(ErrorCode::Canceled.as_str()));
    // The sender died between its call and its record: once the lease passes, it comes back.
    assert!(store::take_owed_callbacks(&client, LEASE, 10).await.unwrap().is_empty());
    db.sql("UPDATE task_callbacks SET due_at = now() - interval '1 second'").await;
    let second = store::take_owed_callbacks(&client, LEASE, 10).await.unwrap();
    assert_eq!((second.len(), second[0].tries), (1, 2), "taken again, a second try");

    let retry = CallbackEnd::Retry { after: Duration::from_secs(30), error: "ThrottlingException".into() };
    store::record_callbacks(&client, &[(second[0].id, retry)]).await.unwrap();
    assert_eq!(states(&db, task_id).await, ["owed"]);
    assert!(store::take_owed_callbacks(&client, LEASE, 10).await.unwrap().is_empty(), "waits its backoff");
    assert_eq!(
        db.count("SELECT count(*) FROM task_callbacks WHERE due_at > now() + interval '20 seconds' AND last_error = 'ThrottlingException'")
            .await,
        1
    );
}

/// Whatever ends a task makes its callbacks owed: the worker's success and failure, the group
/// commit, a cancel, a run's cancel, the sweeper's expiry of queued and of stale running tasks.
#[tokio::test]
async fn every_terminal_transition_makes_the_callbacks_owed() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let keys = ["complete", "fail", "many", "cancel", "expire-queued", "expire-running"];
    let mut ids = Vec::new();
    for key in keys {
        let id = queued(&db, key).await;
        store::attach_callbacks(&client, &[step_functions(id, key)]).await.unwrap();
        ids.push(id);
    }
    let run = run(&db, APP).await;
    let run_task = store::create_task(&client, &new_task(APP, store::TaskOwner::Run(run.id), "run"))
        .await
        .unwrap()
        .task()
        .id;
    store::attach_callbacks(&client, &[step_functions(run_task, "run")]).await.unwrap();

    let lease = |claim: Claim| match claim {
        Claim::Claimed(task) => task.lease(),
        other => panic!("claim: {other:?}"),
    };
    let l = lease(claim_one(&client, ids[0]).await);
    store::complete_attempt(&client, l, &json!("pos"), None, false).await.unwrap();
    let l = lease(claim_one(&client, ids[1]).await);
    store::fail_attempt(&client, l, ErrorCode::ModelRefused, "no").await.unwrap();
    let l = lease(claim_one(&client, ids[2]).await);
    store::complete_many(&client, &[(l, &json!("neg"), None)], false).await.unwrap();
    store::request_cancel(&client, APP, ids[3]).await.unwrap();
    db.sql(&format!("UPDATE tasks SET created_at = now() - interval '1 hour' WHERE id = '{}'", ids[4])).await;
    store::expire_queued(&client, Duration::from_secs(600), 10).await.unwrap();
    let _ = lease(claim_one(&client, ids[5]).await);
    db.sql(&format!(
        "UPDATE tasks SET heartbeat_at = now() - interval '1 hour', attempts = max_attempts WHERE id = '{}'",
        ids[5]
    ))
    .await;
    crate::stale::expire_stale(&client, Duration::from_secs(30), 10).await;
    store::cancel_run(&client, APP, run.id).await.unwrap();
    store::cancel_run_tasks(&client, run.id, 10).await.unwrap();

    for (key, id) in keys.iter().chain(["run"].iter()).zip(ids.iter().chain([run_task].iter())) {
        assert_eq!(states(&db, *id).await, ["owed"], "{key}");
    }
    let taken = store::take_owed_callbacks(&client, LEASE, 100).await.unwrap();
    assert_eq!(taken.len(), 7);
}

#[tokio::test]
async fn a_callback_for_a_task_that_already_ended_is_owed_at_once() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task_id = queued(&db, "k").await;
    store::request_cancel(&client, APP, task_id).await.unwrap();
    let owed = store::attach_callbacks(
        &client,
        &[step_functions(task_id, "late"), NewCallback { task_id, kind: "lambda_durable", token: "Y2I=" }],
    )
    .await
    .unwrap();
    assert_eq!(owed, [task_id, task_id]);
    assert_eq!(states(&db, task_id).await, ["owed", "owed"]);
}

/// The heartbeat duty takes each waiting callback once per interval, and finds one its task's
/// end left waiting (the trigger's backstop).
#[tokio::test]
async fn heartbeats_are_due_once_an_interval_and_find_a_callback_left_waiting() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let live = queued(&db, "live").await;
    let ended = queued(&db, "ended").await;
    store::attach_callbacks(&client, &[step_functions(live, "a"), step_functions(ended, "b")]).await.unwrap();
    let every = Duration::from_secs(45);
    assert!(store::take_heartbeats(&client, every, 10).await.unwrap().is_empty(), "just attached");
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;
    // As if a transition had ended the task without its callback becoming owed (the trigger on
    // `tasks` owes it, migrations/V38: put back as a lost write would leave it).
    db.sql(&format!(
        "UPDATE tasks SET status = 'canceled', error_code = 'CANCELED', completed_at = now() WHERE id = '{ended}'"
    ))
    .await;
    db.sql(&format!("UPDATE task_callbacks SET state = 'waiting', due_at = NULL WHERE task_id = '{ended}'"))
        .await;
    let mut due = store::take_heartbeats(&client, every, 10).await.unwrap();
    due.sort_by_key(|d| d.owed);
    assert_eq!(due.len(), 2);
    assert_eq!((due[0].task_id, due[0].owed, due[0].task_status), (live, false, TaskStatus::Queued));
    assert_eq!((due[1].task_id, due[1].owed), (ended, true));
    assert_eq!(states(&db, ended).await, ["owed"]);
    assert!(store::take_heartbeats(&client, every, 10).await.unwrap().is_empty(), "heartbeated now");
}

#[tokio::test]
async fn a_queued_task_whose_every_caller_is_gone_is_canceled() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let alone = queued(&db, "alone").await;
    let shared = queued(&db, "shared").await;
    let running = queued(&db, "running").await;
    store::attach_callbacks(
        &client,
        &[
            step_functions(alone, "a"),
            step_functions(shared, "b1"),
            step_functions(shared, "b2"),
            step_functions(running, "c"),
        ],
    )
    .await
    .unwrap();
    let Claim::Claimed(_) = claim_one(&client, running).await else { panic!("claim") };
    let due = store::take_heartbeats(&client, Duration::ZERO, 10).await.unwrap();
    let gone: Vec<(i64, CallbackEnd)> = due
        .iter()
        .filter(|d| d.token != "b2")
        .map(|d| (d.id, CallbackEnd::Gone("TaskTimedOut: the execution timed out".into())))
        .collect();
    assert_eq!(store::record_callbacks(&client, &gone).await.unwrap(), 3);
    let events = store::cancel_abandoned(&client, &[alone, shared, running]).await.unwrap();
    assert_eq!(
        events.iter().map(|e| e.task_id).collect::<Vec<_>>(),
        [alone],
        "only the queued one nobody waits for"
    );
    assert_eq!(events[0].payload["status"], "canceled");
    let status = |id: Uuid| {
        let db = &db;
        async move {
            let client = db.client().await;
            let row = client.query_one("SELECT status FROM tasks WHERE id = $1", &[&id]).await.unwrap();
            row.get::<_, String>(0)
        }
    };
    assert_eq!(status(alone).await, "canceled");
    assert_eq!(status(shared).await, "queued", "another caller still waits");
    assert_eq!(status(running).await, "running", "started: left to finish");
    assert_eq!(states(&db, alone).await, ["gone"], "a gone callback is not owed by the cancel");
}

#[tokio::test]
async fn a_task_a_create_without_a_callback_named_is_not_canceled_when_its_callbacks_are_gone() {
    let db = TestDb::new().await;
    let client = db.client().await;
    // Created by a create without a callback (its caller polls), then given a token by another.
    let mut polled = new_task(APP, app_owner("s"), "polled");
    polled.has_poller = true;
    let polled = store::create_task(&client, &polled).await.unwrap().task().id;
    // Created by a create with a callback, then found by a create without one.
    let found = queued(&db, "found").await;
    store::mark_pollers(&client, &[found]).await.unwrap();
    // Only ever created with callbacks (the testkit's task is one).
    let callers_only = queued(&db, "callers-only").await;
    let batch = store::create_tasks(
        &client,
        APP,
        &[{
            let mut item = new_task(APP, app_owner("s"), "batch-polled");
            item.has_poller = true;
            item
        }],
    )
    .await
    .unwrap();
    let batch_polled = batch[0].as_ref().unwrap().task().id;
    store::attach_callbacks(
        &client,
        &[
            step_functions(polled, "p"),
            step_functions(found, "f"),
            step_functions(callers_only, "c"),
            step_functions(batch_polled, "b"),
        ],
    )
    .await
    .unwrap();
    let due = store::take_heartbeats(&client, Duration::ZERO, 10).await.unwrap();
    let gone: Vec<(i64, CallbackEnd)> = due
        .iter()
        .map(|d| (d.id, CallbackEnd::Gone("TaskTimedOut: the execution timed out".into())))
        .collect();
    assert_eq!(store::record_callbacks(&client, &gone).await.unwrap(), 4);
    let events =
        store::cancel_abandoned(&client, &[polled, found, callers_only, batch_polled]).await.unwrap();
    assert_eq!(
        events.iter().map(|e| e.task_id).collect::<Vec<_>>(),
        [callers_only],
        "a poller still waits for the others"
    );
    let statuses = client
        .query("SELECT effect_key, status FROM tasks ORDER BY effect_key", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get::<_, String>(0), row.get::<_, String>(1)))
        .collect::<Vec<_>>();
    assert_eq!(
        statuses,
        [
            ("batch-polled".to_owned(), "queued".to_owned()),
            ("callers-only".to_owned(), "canceled".to_owned()),
            ("found".to_owned(), "queued".to_owned()),
            ("polled".to_owned(), "queued".to_owned()),
        ]
    );
}
