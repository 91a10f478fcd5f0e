//! Every statement that locks several tasks locks them in id order, so two such statements over
//! the same tasks wait for each other instead of deadlocking (a deadlock fails a whole group:
//! every neighbour of a group commit, every task of a delete page). A scope's delete and the
//! completion of the same running tasks, handed over in the opposite order, run side by side
//! many times: neither ever fails.

use aitasks_store as store;
use aitasks_testkit::*;
use serde_json::json;
use store::{Claim, StoreError};

const ROUNDS: usize = 12;
const TASKS: usize = 150;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delete_and_a_group_commit_over_the_same_tasks_never_deadlock() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut deadlocks = 0;
    for round in 0..ROUNDS {
        let scope = format!("scope-{round}");
        let items: Vec<_> =
            (0..TASKS).map(|i| new_task(APP, app_owner(&scope), &format!("{round}-{i}"))).collect();
        let ids: Vec<uuid::Uuid> = store::create_tasks(&client, APP, &items)
            .await
            .unwrap()
            .into_iter()
            .map(|created| created.unwrap().task().id)
            .collect();
        let mut leases: Vec<store::Lease> = store::claim_by(&client, &ids, &claim_mark())
            .await
            .unwrap()
            .into_iter()
            .map(|claim| match claim {
                Claim::Claimed(task) => task.lease(),
                other => panic!("{other:?}"),
            })
            .collect();
        // The group commit is handed its attempts newest first; the delete walks the scope.
        leases.reverse();
        let output = json!("pos");
        let attempts: Vec<_> = leases.iter().map(|lease| (*lease, &output, None)).collect();
        let (completer, mut deleter) = (db.client().await, db.client().await);
        let (completed, deleted) = tokio::join!(
            store::complete_many(&completer, &attempts, false),
            store::delete_owned_page(&mut deleter, APP, &scope, None, TASKS)
        );
        for result in [completed.map(|_| ()), deleted.map(|_| ())] {
            match result {
                Ok(()) => {}
                Err(StoreError::Database(error))
                    if error.code() == Some(&tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED) =>
                {
                    deadlocks += 1
                }
                Err(other) => panic!("{other}"),
            }
        }
        let left = db.count(&format!("SELECT count(*) FROM tasks WHERE scope_id = '{scope}'")).await;
        assert!(left == 0 || left == TASKS as i64, "the delete is all or nothing: {left} left");
    }
    println!("{ROUNDS} rounds of {TASKS} tasks: {deadlocks} deadlock(s)");
    assert_eq!(deadlocks, 0, "statements over the same tasks waited for each other");
}
