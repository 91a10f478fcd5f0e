//! Completion events on an EventBridge bus (`AITASK_EVENT_BUS_NAME`), on moto's server: a rule
//! on the bus targets an SQS queue, and each task's event arrives there with its `detail-type`,
//! our `source` and the event's payload as its `detail`. The events queue still gets them too.

use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-bus";

#[tokio::test]
async fn completion_events_reach_a_rule_on_the_bus_with_their_detail() {
    let moto = Moto::shared().await;
    let config = moto.sdk_config().await;
    let events = aws_sdk_eventbridge::Client::new(&config);
    let sqs = sqs_at(&moto.endpoint).await;
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let bus = format!("workflows-{suffix}");
    let source = format!("aitasks.e2e.{suffix}");
    events.create_event_bus().name(&bus).send().await.unwrap();
    let target = sqs.create_queue().queue_name(format!("ai-tasks-{suffix}")).send().await.unwrap();
    let target_url = target.queue_url().unwrap().to_owned();
    let target_arn = sqs
        .get_queue_attributes()
        .queue_url(&target_url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes()
        .unwrap()[&aws_sdk_sqs::types::QueueAttributeName::QueueArn]
        .clone();
    events
        .put_rule()
        .name(format!("ai-tasks-{suffix}"))
        .event_bus_name(&bus)
        .event_pattern(json!({"source": [source]}).to_string())
        .send()
        .await
        .unwrap();
    events
        .put_targets()
        .rule(format!("ai-tasks-{suffix}"))
        .event_bus_name(&bus)
        .targets(aws_sdk_eventbridge::types::Target::builder().id("queue").arn(&target_arn).build().unwrap())
        .send()
        .await
        .unwrap();

    let stack = Stack::start_with(&[
        ("AITASK_EVENT_BUS_NAME", &bus),
        ("AITASK_EVENT_SOURCE", &source),
        ("AWS_ENDPOINT_URL_EVENTBRIDGE", &moto.endpoint),
    ])
    .await;
    let api = stack.api(APP);
    let body = |key: &str| {
        json!({"owner": {"scopeId": "docs"}, "stepKey": "classify", "effectKey": key, "modelId": "default",
               "request": {"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}})
    };
    // The second task's provider call takes 10 s: canceled before it could end otherwise.
    stack.stub.script([Reply::Auto, Reply::slow(Duration::from_secs(10))]);
    let (_, done) = api.post("/v1/tasks", &body("done")).await;
    let done = done["id"].as_str().unwrap().to_owned();
    api.wait_terminal(&done).await;
    let (_, second) = api.post("/v1/tasks", &body("second")).await;
    let second = second["id"].as_str().unwrap().to_owned();
    api.post(&format!("/v1/tasks/{second}/cancel"), &json!({})).await;
    assert_eq!(api.wait_terminal(&second).await["status"], "canceled");

    let mut arrived: Vec<Value> = Vec::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    while arrived.len() < 2 && tokio::time::Instant::now() < until {
        let out = sqs
            .receive_message()
            .queue_url(&target_url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        arrived
            .extend(out.messages().iter().map(|m| serde_json::from_str::<Value>(m.body().unwrap()).unwrap()));
    }
    let of = |id: &str| arrived.iter().find(|e| e["detail"]["taskId"] == id).cloned();
    let done_event = of(&done).unwrap_or_else(|| panic!("the event of {done} arrived: {arrived:?}"));
    assert_eq!(done_event["detail-type"], "AI Task Succeeded");
    assert_eq!(done_event["source"], source.as_str());
    assert_eq!(done_event["detail"]["type"], "task.settled");
    assert_eq!(done_event["detail"]["status"], "succeeded");
    assert_eq!(done_event["detail"]["effectKey"], "done");
    let second_event = of(&second).expect("the second task's event arrived");
    assert_eq!(second_event["detail-type"], "AI Task Canceled");
    assert_eq!(second_event["detail"]["errorCode"], "WORKFLOW_AI_CANCELED");
    // The events queue is still the default destination.
    let queued = stack.queues.drain(&stack.queues.events, Duration::from_secs(2)).await;
    assert_eq!(queued.len(), 2, "{queued:?}");
    assert_eq!(stack.db.count("SELECT count(*) FROM task_events WHERE delivered_at IS NULL").await, 0);
}
