//! `make stats` prints the live figures of a stack: tasks by status, the queue's depth, and the
//! provider latency and tokens of the last hour.

use std::process::Command;

use aitasks_store::{Claim, Created};
use aitasks_testkit::*;
use serde_json::json;

#[tokio::test]
async fn stats_count_the_tasks_and_sum_what_the_provider_spent() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let client = db.client().await;
    for (i, tokens) in [(0, 100), (1, 300)] {
        let Created::New(task) =
            aitasks_store::create_task(&client, &new_task(APP, app_owner("s"), &format!("done-{i}")))
                .await
                .unwrap()
        else {
            unreachable!("fresh key")
        };
        let Claim::Claimed(task) = claim_one(&client, task.id).await else { panic!("claim") };
        let usage = json!({"inputTokens": tokens, "outputTokens": 7, "model": "m", "latencyMs": 200 * (i + 1), "calls": 1});
        aitasks_store::complete_attempt(&client, task.lease(), &json!("pos"), Some(&usage), false)
            .await
            .unwrap();
    }
    aitasks_store::create_task(&client, &new_task(APP, app_owner("s"), "waiting")).await.unwrap();
    queues.send(&queues.tasks, "{}").await;

    let output = Command::new(env!("CARGO_BIN_EXE_aitasks-dev-server"))
        .arg("stats")
        .env("AITASK_ENV_FILE", "/nonexistent")
        .env("DATABASE_URL", &db.app_url)
        .env("AITASK_DB_CA_FILE", ca_file().map(|p| p.display().to_string()).unwrap_or_default())
        .env("AITASK_TASK_QUEUE_URL", &queues.tasks)
        .env("AWS_ENDPOINT_URL_SQS", &queues.endpoint)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .output()
        .expect("run the stats");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}{}", String::from_utf8_lossy(&output.stderr));
    assert!(text.contains("queued 1  running 0  succeeded 2  failed 0  canceled 0"), "{text}");
    assert!(text.contains("task queue   1 messages"), "{text}");
    assert!(
        text.contains("2 succeeded; provider latency p50 300 ms, p99 398 ms; tokens in 400, out 14"),
        "{text}"
    );
}
