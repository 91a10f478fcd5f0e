//! The cancel check and heartbeat run beside the provider call: when one cannot finish (here the
//! task's row is locked, as a stuck connection or a long lock would hold it), the deadline still
//! stops the attempt, and the invocation returns before Lambda's deadline, not when the lock goes.

use std::time::{Duration, Instant};

use crate::common::*;
use aitasks_testkit::*;

#[tokio::test]
async fn a_blocked_heartbeat_cannot_hold_the_worker_past_its_deadline() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_secs(30)));
    let app = app(
        &db,
        &queues,
        &stub,
        &[
            ("AITASK_HEARTBEAT_MS", "100"),
            ("AITASK_CANCEL_POLL_MS", "100"),
            ("AITASK_DEADLINE_MARGIN_MS", "1000"),
        ],
    )
    .await;
    let task = task(&db, "slow", "Sentiment?", 3).await;

    // Once the attempt is running, another session locks the row until the test ends (it is
    // aborted then): every heartbeat (an UPDATE of the row) waits on it.
    let blocker = tokio::spawn({
        let url = db.url.clone();
        let id = task.id;
        async move {
            let (mut client, connection) =
                tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
            tokio::spawn(connection);
            loop {
                let row = client.query_one("SELECT status FROM tasks WHERE id = $1", &[&id]).await.unwrap();
                if row.get::<_, String>(0) == "running" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let transaction = client.transaction().await.unwrap();
            transaction.execute("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", &[&id]).await.unwrap();
            std::future::pending::<()>().await;
            transaction.rollback().await.unwrap();
        }
    });

    let started = Instant::now();
    let response = process_task::handle(&app, event(&[&task], Duration::from_secs(4))).await.unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "returned {took:?} after the start: the deadline was 4 s away");
    assert_eq!(
        response.batch_item_failures.len(),
        1,
        "the message comes back; the sweeper owns the task now"
    );
    blocker.abort();
}
