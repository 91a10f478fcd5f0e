//! `GET /v1/tasks/{id}?wait=S` holds no database connection while it waits: with a pool of one
//! connection, other requests are answered at once while a long poll is open.

use std::time::{Duration, Instant};

use aitasks_contracts::AppId;
use aitasks_runtime::api;
use aitasks_store::Created;
use aitasks_testkit::*;

#[tokio::test]
async fn a_long_poll_leaves_the_pool_to_other_requests() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(&db, &queues, &stub, &[("AITASK_DB_POOL_SIZE", "1")]);
    let Created::New(task) =
        aitasks_store::create_task(&db.client().await, &new_task(APP, app_owner("s"), "waited"))
            .await
            .unwrap()
    else {
        unreachable!("fresh key")
    };
    let tenant = AppId::parse(APP).unwrap();
    let id = task.id.to_string();

    let started = Instant::now();
    let (waited, others) = tokio::join!(api::get_task(&app, &tenant, &id, Duration::from_secs(3)), async {
        // Once the long poll has looked (and given its connection back to wait).
        wait_until("the long poll's first look", || async {
            db.statement_calls("FROM tasks WHERE id = $1 AND app_id = $2").await.0 >= 1
        })
        .await;
        let mut slowest = Duration::ZERO;
        for _ in 0..5 {
            let asked = Instant::now();
            let got = api::get_task(&app, &tenant, &id, Duration::ZERO).await.expect("answered");
            assert_eq!(got.id, task.id);
            slowest = slowest.max(asked.elapsed());
        }
        slowest
    });
    assert_eq!(
        waited.expect("the long poll answers").status.as_str(),
        "queued",
        "not terminal: waited it out"
    );
    assert!(started.elapsed() >= Duration::from_secs(3), "the long poll waited");
    assert!(
        others < Duration::from_secs(1),
        "another request waited {others:?} for the pool's only connection"
    );
}
