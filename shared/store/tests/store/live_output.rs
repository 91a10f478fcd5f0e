//! Live output's statements (sql/output/) against a real Postgres, where workers race: a worker
//! that lost its task must not take the stream back from the attempt that runs it now.

use std::sync::Arc;
use std::time::Duration;

use aitasks_store::{self as store, Chunk, Claim};
use aitasks_testkit::*;

async fn claimed(db: &TestDb, task_id: uuid::Uuid) -> store::Task {
    match claim_one(&db.client().await, task_id).await {
        Claim::Claimed(task) => task,
        other => panic!("expected a claim, got {other:?}"),
    }
}

fn chunk(text: &str) -> Chunk<'_> {
    Chunk { start_at: 0, text, is_final: false }
}

/// The old worker's open began while its lease held (its statement saw attempt 1 running) and
/// waited on the stream's row; meanwhile the task was requeued, claimed again, and attempt 2
/// opened its segment. The old open must then write nothing: the stream stays attempt 2's, and
/// its text is not deleted for attempt 1's.
#[tokio::test]
async fn a_lost_workers_open_that_waited_does_not_take_the_stream_from_the_new_attempt() {
    let db = Arc::new(TestDb::new().await);
    let client = db.client().await;
    let task = store::create_task(&client, &new_task(APP, app_owner("s"), "k")).await.unwrap().into_task();
    let first = claimed(&db, task.id).await.lease();
    assert_eq!(store::open_segment(&client, first, chunk("attempt one")).await.unwrap(), Some(1));

    // A session holds the stream's row, so the old worker's next open waits on it.
    let holder = db.client().await;
    holder
        .batch_execute(&format!("BEGIN; SELECT 1 FROM task_streams WHERE task_id = '{}' FOR UPDATE", task.id))
        .await
        .unwrap();
    let old = {
        let db = db.clone();
        tokio::spawn(async move { store::open_segment(&db.client().await, first, chunk("stale")).await })
    };
    db.wait_for_lock_waits("INSERT INTO task_streams", 1).await;

    // The old worker is lost: the sweeper requeues the task, attempt 2 claims it and opens its
    // segment (in the session that holds the row).
    db.sql("UPDATE tasks SET heartbeat_at = now() - interval '1 minute'").await;
    let expired = crate::stale::expire_stale(&client, Duration::from_secs(30), 100).await;
    assert_eq!(expired.requeued.len(), 1);
    let second = claimed(&db, task.id).await.lease();
    assert_eq!(second.attempt, 2);
    assert_eq!(store::open_segment(&holder, second, chunk("attempt two")).await.unwrap(), Some(2));
    holder.batch_execute("COMMIT").await.unwrap();

    assert_eq!(old.await.unwrap().unwrap(), None, "the lost worker writes nothing");
    let look = store::read_output(&client, APP, task.id, None, 0, 10).await.unwrap().unwrap();
    let stream = look.stream.expect("a stream");
    assert_eq!(
        (stream.segment, stream.attempt, stream.chunks),
        (2, 2, vec![(0, "attempt two".to_owned())]),
        "the reader reads attempt 2's text"
    );
}
