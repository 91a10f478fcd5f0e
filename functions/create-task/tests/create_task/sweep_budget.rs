//! Review: the sweeper's duties are each bounded by `AITASK_SWEEP_MAX_PAGES` statements of
//! `AITASK_SWEEP_PAGE` rows (docs/lifecycle.md, "The sweeper"). finishRunCancels is not: it takes
//! a page of runs and gives each run a whole budget of pages, so one sweep's work on run cancels
//! is SWEEP_BATCH times the budget (100 runs x 10 pages x 100 tasks = 100,000 tasks and their
//! events by default), and the duties after it (sendOwed, deliverEvents) wait behind it, or never
//! run when the invocation times out first.

use aitasks_contracts::AppId;
use aitasks_runtime::{api, sweeper};
use aitasks_store::TaskOwner;
use aitasks_testkit::*;

#[tokio::test]
async fn finishing_run_cancels_stays_within_one_duty_s_budget() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(
        &db,
        &queues,
        &stub,
        &[
            ("AITASK_REQUEST_PAGE", "1"),
            ("AITASK_REQUEST_WORK_MS", "0"),
            ("AITASK_SWEEP_PAGE", "2"),
            ("AITASK_SWEEP_MAX_PAGES", "2"),
        ],
    );
    let client = db.client().await;
    let tenant = AppId::parse(APP).unwrap();
    // Three runs of ten tasks, each canceled by a request that reached one task.
    for _ in 0..3 {
        let run = run(&db, APP).await;
        for i in 0..10 {
            aitasks_store::create_task(
                &client,
                &new_task(APP, TaskOwner::Run(run.id), &format!("{}-{i}", run.id)),
            )
            .await
            .unwrap();
        }
        api::cancel_run(&app, &tenant, &run.id.to_string()).await.unwrap();
    }
    let summary = sweeper::sweep(&app).await;
    let budget = 2 * 2;
    println!("one sweep: {} run tasks canceled, the duty's budget {budget} rows", summary.run_tasks_canceled);
    assert!(
        summary.run_tasks_canceled <= budget,
        "finishRunCancels reached {} tasks in one sweep, over its budget of {budget} (2 statements of 2 rows)",
        summary.run_tasks_canceled
    );
}
