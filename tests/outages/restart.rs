//! Restarting the local stack stalls nothing. As a new user would: tasks in flight, the dev
//! server and the SQS-compatible server killed (the latter comes back empty: it keeps messages
//! in memory), Postgres restarted, everything started again with the default timings. Every
//! task succeeds within a minute of the restart, once each.

use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::json;

const TASKS: usize = 40;

#[tokio::test]
async fn killing_the_whole_local_stack_mid_run_loses_no_task_and_stalls_none() {
    let _outage = crate::OUTAGE.lock().await;
    let mut sqs = PrivateSqs::start().await;
    let queues = TestQueues::create_at(&sqs.endpoint, 10, 1800).await;
    let db = TestDb::new().await;
    let stub = StubProvider::start().await;
    stub.set_default(Reply::slow(Duration::from_millis(1500)));
    // The defaults a new user runs with (the test stack shortens them otherwise).
    let env = Stack::env(
        &db,
        &queues,
        &stub,
        &[
            ("AITASK_SWEEP_INTERVAL_MS", "60000"),
            ("AITASK_STALE_RUNNING_MS", "30000"),
            ("AITASK_HEARTBEAT_MS", "10000"),
            ("AITASK_CANCEL_POLL_MS", "500"),
            ("AITASK_UNSENT_GRACE_MS", "5000"),
            ("AITASK_LOCAL_POLL_WAIT_S", "10"),
        ],
    );
    let mut server = DevServer::spawn(env).await;
    let api = Api::new(&server.address, dev_token("app-restart"));
    for i in 0..TASKS {
        let body = json!({
            "owner": {"scopeId": "s"}, "stepKey": "classify", "effectKey": format!("k{i}"), "modelId": "default",
            "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"n": i}, "choices": ["pos", "neg"]},
        });
        assert_eq!(api.post("/v1/tasks", &body).await.0, 201);
    }
    // Mid-run: some running, some waiting in the queue.
    let count = |status: &str| format!("SELECT count(*) FROM tasks WHERE status = '{status}'");
    let until = Instant::now() + aitasks_testkit::PATIENCE;
    while db.count(&count("running")).await < 5 || db.count(&count("queued")).await < 5 {
        assert!(Instant::now() < until, "never mid-run");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    server.kill().await;
    sqs.kill().await;
    let queued_at_kill = db.count(&count("queued")).await;
    let running_at_kill = db.count(&count("running")).await;
    // Events a worker handed over before the kill (migrations/V41) have no message left behind
    // them: the start gives them back to the outbox.
    let killed_at: String = db.client().await.query_one("SELECT now()::text", &[]).await.unwrap().get(0);
    let handed_over_at_kill = db.count("SELECT count(*) FROM task_events WHERE handed_over").await;
    assert!(
        handed_over_at_kill > 0,
        "the tasks done before the kill handed their events over, as in the stack"
    );
    restart_postgres();
    sqs.restart().await;
    queues.recreate().await;
    let restarted = Instant::now();
    server.restart().await;

    loop {
        let succeeded = db.count_surviving_restart(&count("succeeded")).await;
        if succeeded == TASKS as i64 {
            break;
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(60),
            "{succeeded} of {TASKS} succeeded a minute after the restart ({queued_at_kill} were queued and \
             {running_at_kill} running at the kill)"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        db.count_surviving_restart("SELECT count(*) FROM task_events").await,
        TASKS as i64,
        "one settlement each"
    );
    assert_eq!(
        db.count_surviving_restart(&format!(
            "SELECT count(*) FROM task_events WHERE handed_over AND delivered_at < '{killed_at}'::timestamptz"
        ))
        .await,
        0,
        "no event handed over before the kill is left with nothing behind it"
    );
    let logs = server.logs();
    assert!(logs.contains("re-sent the messages the queue lost"), "the start said what it did:\n{logs}");
    server.kill().await;
}
