//! Completion events handed over to the worker's publish (migrations/V41): written delivered by
//! the worker's completions, handed back to the sweeper when the publish fails, and taken back by
//! the worker that receives the task's message again after it ended. Every other ending keeps
//! the outbox, even on a connection that just handed an event over.

use std::time::Duration;

use aitasks_contracts::ErrorCode;
use aitasks_store::{self as store, Claim, Custody, Fenced, NewCallback, PendingEvent};
use aitasks_testkit::*;
use serde_json::json;
use uuid::Uuid;

const LEASE: Duration = Duration::from_secs(60);

async fn running(client: &store::Client, key: &str) -> store::Task {
    let id = store::create_task(client, &new_task(APP, app_owner("s"), key)).await.unwrap().task().id;
    let Claim::Claimed(task) = claim_one(client, id).await else { panic!("claimed") };
    task
}

fn written(fenced: Fenced<PendingEvent>) -> PendingEvent {
    match fenced {
        Fenced::Written(event) => event,
        Fenced::Lost => panic!("the attempt completes"),
    }
}

/// `(delivered, handed_over)` of a task's event.
async fn stored(db: &TestDb, event_id: i64) -> (bool, bool) {
    let row = db
        .client()
        .await
        .query_one(
            "SELECT delivered_at IS NOT NULL, handed_over FROM task_events WHERE id = $1",
            &[&event_id],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// Undelivered events the sweeper takes once the publisher's grace (30 s) has run out.
async fn due_to_sweeper(db: &TestDb) -> Vec<i64> {
    let client = db.client().await;
    let graced = "UPDATE task_events SET available_at = now() WHERE delivered_at IS NULL";
    client.execute(graced, &[]).await.unwrap();
    store::take_undelivered_events(&client, LEASE, 100).await.unwrap().iter().map(|e| e.id).collect()
}

#[tokio::test]
async fn a_handed_over_event_is_written_delivered_and_the_sweeper_leaves_it() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = running(&client, "k").await;
    let event =
        written(store::complete_attempt(&client, task.lease(), &json!("pos"), None, true).await.unwrap());
    assert_eq!(event.custody, Custody::HandedOver { owes_callbacks: false });
    assert_eq!(stored(&db, event.id).await, (true, true));
    assert!(due_to_sweeper(&db).await.is_empty(), "nothing for the sweeper to send");

    // The same connection's next ending is not the worker's completion: the outbox's, as before.
    let other = running(&client, "k2").await;
    let failed =
        written(store::fail_attempt(&client, other.lease(), ErrorCode::ProviderError, "down").await.unwrap());
    assert_eq!(failed.custody, Custody::Outbox);
    assert_eq!(stored(&db, failed.id).await, (false, false), "the setting lasted one transaction");
    let third = running(&client, "k3").await;
    let outbox =
        written(store::complete_attempt(&client, third.lease(), &json!("neg"), None, false).await.unwrap());
    assert_eq!((outbox.custody, stored(&db, outbox.id).await), (Custody::Outbox, (false, false)));
    assert_eq!(due_to_sweeper(&db).await, vec![failed.id, outbox.id]);
}

#[tokio::test]
async fn a_group_says_which_of_its_tasks_owe_callbacks() {
    let db = TestDb::new().await;
    let client = db.client().await;
    // In id order (the order the statement locks and ends them), the one with a callback in
    // the middle: each row's answer is its own, not its neighbour's.
    let first = running(&client, "first").await;
    let waited = running(&client, "waited").await;
    let last = running(&client, "last").await;
    let callback = NewCallback { task_id: waited.id, kind: "step_functions", token: "tok" };
    store::attach_callbacks(&client, &[callback]).await.unwrap();
    let output = json!("pos");
    let group =
        [(last.lease(), &output, None), (waited.lease(), &output, None), (first.lease(), &output, None)];
    let owes: Vec<Custody> = store::complete_many(&client, &group, true)
        .await
        .unwrap()
        .into_iter()
        .map(|fenced| written(fenced).custody)
        .collect();
    let handed = |owes_callbacks| Custody::HandedOver { owes_callbacks };
    assert_eq!(
        owes,
        [handed(false), handed(true), handed(false)],
        "answered item by item, in the given order"
    );
    // The owed callback is still taken by the publisher's statement, with no event to mark.
    let taken = store::mark_delivered_and_take_owed(&client, &[], &[waited.id], LEASE).await.unwrap();
    assert_eq!(taken.iter().map(|c| c.token.as_str()).collect::<Vec<_>>(), ["tok"]);
}

/// A create that attaches a callback holds the task FOR SHARE until it commits; a completion
/// that waited for it must still say that the task owes that callback, which the completion's
/// own snapshot, taken before the wait, does not hold.
#[tokio::test]
async fn a_callback_attached_while_the_completion_waits_is_still_owed_to_the_publisher() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = running(&client, "k").await;
    let mut attacher = db.client().await;
    let attaching = attacher.transaction().await.unwrap();
    let callback = NewCallback { task_id: task.id, kind: "step_functions", token: "late" };
    store::attach_callbacks(&attaching, &[callback]).await.unwrap();
    let completer = db.client().await;
    let lease = task.lease();
    let completing = tokio::spawn(async move {
        let output = json!("pos");
        store::complete_many(&completer, &[(lease, &output, None)], true).await.unwrap().pop().unwrap()
    });
    wait_until("the completion waits for the attaching create", || async {
        db.lock_waits("SET status = 'succeeded'").await >= 1
    })
    .await;
    attaching.commit().await.unwrap();
    let event = written(completing.await.unwrap());
    assert_eq!(event.custody, Custody::HandedOver { owes_callbacks: true });
}

#[tokio::test]
async fn a_failed_publish_hands_the_event_back_to_the_sweeper() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = running(&client, "k").await;
    let event =
        written(store::complete_attempt(&client, task.lease(), &json!("pos"), None, true).await.unwrap());
    assert_eq!(store::hand_back(&client, &[event.id]).await.unwrap(), 1);
    assert_eq!(stored(&db, event.id).await, (false, false));
    let taken = store::take_undelivered_events(&client, LEASE, 10).await.unwrap();
    assert_eq!(taken.iter().map(|e| e.id).collect::<Vec<_>>(), [event.id], "due to the sweeper at once");
    assert_eq!(store::hand_back(&client, &[event.id]).await.unwrap(), 0, "the outbox's now");
}

#[tokio::test]
async fn a_message_back_for_an_ended_task_takes_its_handed_over_event_once() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = running(&client, "k").await;
    let event =
        written(store::complete_attempt(&client, task.lease(), &json!("pos"), None, true).await.unwrap());

    let taken = store::take_handed_over(&client, task.id, LEASE).await.unwrap().expect("taken back");
    let again = taken.event;
    assert!(!taken.rebuilt);
    assert_eq!((again.id, again.task_id, &again.payload), (event.id, task.id, &event.payload));
    assert_eq!(again.custody, Custody::Outbox, "marked by the publish that follows");
    assert_eq!(stored(&db, event.id).await, (false, false));
    assert!(
        store::take_undelivered_events(&client, LEASE, 10).await.unwrap().is_empty(),
        "hidden from the sweeper"
    );
    assert!(
        store::take_handed_over(&client, task.id, LEASE).await.unwrap().is_none(),
        "a later duplicate takes nothing"
    );

    // An outbox event, and a task that never ended, are nobody's to take back.
    let other = running(&client, "k2").await;
    assert!(store::take_handed_over(&client, other.id, LEASE).await.unwrap().is_none());
    written(store::complete_attempt(&client, other.lease(), &json!("neg"), None, false).await.unwrap());
    assert!(store::take_handed_over(&client, other.id, LEASE).await.unwrap().is_none());
    assert!(store::take_handed_over(&client, Uuid::new_v4(), LEASE).await.unwrap().is_none());
}

#[tokio::test]
async fn a_message_back_after_its_event_was_pruned_rebuilds_the_event_from_its_task() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let task = running(&client, "k").await;
    let event =
        written(store::complete_attempt(&client, task.lease(), &json!("pos"), None, true).await.unwrap());
    db.sql(&format!("DELETE FROM task_events WHERE id = {}", event.id)).await;
    let taken = store::take_handed_over(&client, task.id, LEASE).await.unwrap().expect("rebuilt");
    assert!(taken.rebuilt, "nothing in the store stands behind it");
    let again = taken.event;
    assert_eq!((again.id, again.task_id, &again.payload), (event.id, task.id, &event.payload));
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 0, "the outbox is the trigger's alone");
}
