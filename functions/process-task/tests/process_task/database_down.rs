//! With Postgres unreachable, process-task reports every record of its batch for retry (so the
//! event source mapping leaves the messages on the queue) and calls no provider.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aitasks_providers::{HttpProvider, ModelProfiles};
use aitasks_runtime::{App, Settings};
use aitasks_testkit::*;
use aws_lambda_events::sqs::{SqsEvent, SqsMessage};
use lambda_runtime::{Context, LambdaEvent};

#[tokio::test]
async fn every_record_comes_back_for_retry_when_postgres_is_down() {
    let queues = TestQueues::create(3, 30).await;
    let stub = StubProvider::start().await;
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let variables: HashMap<&str, String> = HashMap::from([
        ("DATABASE_URL", format!("postgres://aitasks_fn:pw@127.0.0.1:{dead_port}/aitasks")),
        ("AITASK_TASK_QUEUE_URL", queues.tasks.clone()),
        ("AITASK_EVENTS_QUEUE_URL", queues.events.clone()),
        ("OPENAI_BASE_URL", stub.base_url.clone()),
        ("OPENAI_API_KEY", STUB_API_KEY.to_owned()),
    ]);
    let lookup = |name: &str| variables.get(name).cloned();
    let settings = Settings::from_lookup(lookup).unwrap();
    let profiles = ModelProfiles::from_lookup(lookup).unwrap();
    let provider = HttpProvider::new(Duration::from_secs(5)).unwrap();
    let app = App::new(settings, profiles, provider, queues.sqs.clone()).unwrap();

    let records: Vec<SqsMessage> = (0..3)
        .map(|i| {
            let mut message = SqsMessage::default();
            message.message_id = Some(format!("message-{i}"));
            message.receipt_handle = Some(format!("receipt-{i}"));
            message.body = Some(format!("{{\"taskId\":\"{}\"}}", uuid::Uuid::new_v4()));
            message
        })
        .collect();
    let mut event = SqsEvent::default();
    event.records = records;
    let mut context = Context::default();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    context.deadline = now + 60_000;

    let response = process_task::handle(&app, LambdaEvent::new(event, context)).await.unwrap();
    let mut failed: Vec<String> =
        response.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect();
    failed.sort();
    assert_eq!(failed, ["message-0", "message-1", "message-2"], "the whole batch is retried");
    assert_eq!(stub.calls(), 0, "no provider call without the database");
}
