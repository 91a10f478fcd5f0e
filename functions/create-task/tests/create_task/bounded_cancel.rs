//! Canceling a run with many tasks works in bounded batches: the request cancels at most its
//! share (`AITASK_REQUEST_PAGE` per statement, for `AITASK_REQUEST_WORK_MS`), answers with the
//! run canceled, and the sweeper finishes the rest. No task joins the run after the answer.

use std::time::Duration;

use aitasks_contracts::AppId;
use aitasks_runtime::{api, sweeper};
use aitasks_store::TaskOwner;
use aitasks_testkit::*;

#[tokio::test]
async fn a_big_run_is_canceled_a_batch_per_request_and_the_sweeper_finishes_it() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app =
        test_app(&db, &queues, &stub, &[("AITASK_REQUEST_PAGE", "10"), ("AITASK_REQUEST_WORK_MS", "0")]);
    let run = run(&db, APP).await;
    let client = db.client().await;
    for i in 0..35 {
        aitasks_store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), &format!("t{i}")))
            .await
            .unwrap();
    }
    let tenant = AppId::parse(APP).unwrap();

    let canceled = api::cancel_run(&app, &tenant, &run.id.to_string()).await.unwrap();
    assert_eq!(canceled.state.as_str(), "canceled");
    let ended = "SELECT count(*) FROM tasks WHERE status = 'canceled'";
    assert_eq!(db.count(ended).await, 10, "one batch in the request");
    let late = aitasks_store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "late")).await;
    assert!(late.is_err(), "the run takes no new task once the cancel answered");

    let summary = sweeper::sweep(&app).await;
    assert_eq!(summary.run_cancels_finished, 1);
    assert_eq!(db.count(ended).await, 35, "the sweeper finished the rest");
    assert_eq!(db.count("SELECT count(*) FROM runs WHERE tasks_cancel_pending").await, 0);
    let events = queues.drain(&queues.events, Duration::from_secs(2)).await;
    assert_eq!(events.len(), 35, "one completion event per task");

    let again = sweeper::sweep(&app).await;
    assert_eq!(again.run_cancels_finished, 0, "nothing left to finish");
}
