//! The store's promise on round trips (see the crate docs): on the happy path create, claim,
//! heartbeat-with-cancel-check and complete-with-event each cost exactly one statement, counted
//! from what the server received (`pg_stat_statements`), with the statement cache warm.

use aitasks_store as store;
use aitasks_testkit::*;
use serde_json::json;
use store::{Claim, Fenced, LeaseCheck};

#[tokio::test]
async fn round_trips() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let run = run(&db, APP).await;

    // Warm the connection's statement cache with one full lifecycle.
    let warm =
        store::create_task(&client, &new_task(APP, store::TaskOwner::Run(run.id), "warm")).await.unwrap();
    let Claim::Claimed(task) = claim_one(&client, warm.task().id).await else { panic!("claim") };
    store::heartbeat(&client, task.lease()).await.unwrap();
    store::check(&client, task.lease()).await.unwrap();
    store::complete_attempt(&client, task.lease(), &json!("pos"), None, false).await.unwrap();

    let mut counts = Vec::new();
    db.reset_statements().await;
    let created =
        store::create_task(&client, &new_task(APP, store::TaskOwner::Run(run.id), "measured")).await.unwrap();
    assert!(created.is_new());
    counts.push(("create", db.statements_seen().await));

    db.reset_statements().await;
    let Claim::Claimed(task) = claim_one(&client, created.task().id).await else { panic!("claim") };
    counts.push(("claim", db.statements_seen().await));

    db.reset_statements().await;
    assert_eq!(store::heartbeat(&client, task.lease()).await.unwrap(), LeaseCheck::Active);
    counts.push(("heartbeat+cancel check", db.statements_seen().await));

    db.reset_statements().await;
    assert_eq!(store::check(&client, task.lease()).await.unwrap(), LeaseCheck::Active);
    counts.push(("cancel poll", db.statements_seen().await));

    db.reset_statements().await;
    let settled = store::complete_attempt(&client, task.lease(), &json!("neg"), None, false).await.unwrap();
    assert!(matches!(settled, Fenced::Written(_)));
    counts.push(("complete+event", db.statements_seen().await));

    for (operation, statements) in &counts {
        println!("{operation}: {statements} statement(s)");
    }
    assert_eq!(
        counts,
        vec![
            ("create", 1),
            ("claim", 1),
            ("heartbeat+cancel check", 1),
            ("cancel poll", 1),
            ("complete+event", 1)
        ]
    );
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 2, "the event came with the complete");
}
