//! Fresh SQS queues per test on the SQS-compatible server, created with aws-sdk-sqs.

use std::time::Duration;

use aws_sdk_sqs::config::{Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::json;

use crate::local_env;

/// A task queue with its DLQ, and an events queue.
#[derive(Clone)]
pub struct TestQueues {
    pub sqs: aws_sdk_sqs::Client,
    pub endpoint: String,
    pub tasks: String,
    pub dlq: String,
    pub events: String,
    prefix: String,
    max_receive: u32,
    visibility_seconds: u32,
}

/// An SQS client for the local server (`AWS_ENDPOINT_URL_SQS`), dummy credentials.
pub(crate) async fn local_sqs() -> (aws_sdk_sqs::Client, String) {
    let endpoint = local_env("AWS_ENDPOINT_URL_SQS");
    (sqs_at(&endpoint).await, endpoint)
}

/// An SQS client for the SQS-compatible server at `endpoint`, dummy credentials.
pub async fn sqs_at(endpoint: &str) -> aws_sdk_sqs::Client {
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(aitasks_runtime::aws::https_client())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("test", "test", None, None, "testkit"))
        .load()
        .await;
    aws_sdk_sqs::Client::new(&config)
}

impl TestQueues {
    /// New queues with a unique prefix. The DLQ takes a message after `max_receive` receives.
    pub async fn create(max_receive: u32, visibility_seconds: u32) -> TestQueues {
        let (_, endpoint) = local_sqs().await;
        TestQueues::create_at(&endpoint, max_receive, visibility_seconds).await
    }

    /// [`TestQueues::create`] on the server at `endpoint`.
    pub async fn create_at(endpoint: &str, max_receive: u32, visibility_seconds: u32) -> TestQueues {
        let prefix = format!("t{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        TestQueues::create_named(endpoint, prefix, max_receive, visibility_seconds).await
    }

    /// The same queues again (same names, so the same URLs), on a server that lost them.
    pub async fn recreate(&self) -> TestQueues {
        TestQueues::create_named(
            &self.endpoint,
            self.prefix.clone(),
            self.max_receive,
            self.visibility_seconds,
        )
        .await
    }

    async fn create_named(
        endpoint: &str,
        prefix: String,
        max_receive: u32,
        visibility_seconds: u32,
    ) -> TestQueues {
        let sqs = sqs_at(endpoint).await;
        let endpoint = endpoint.to_owned();
        let dlq = sqs.create_queue().queue_name(format!("{prefix}-dlq")).send().await.expect("create DLQ");
        let dlq = dlq.queue_url().expect("DLQ url").to_owned();
        let arn = sqs
            .get_queue_attributes()
            .queue_url(&dlq)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .expect("DLQ arn");
        let arn =
            arn.attributes().and_then(|a| a.get(&QueueAttributeName::QueueArn)).expect("QueueArn").clone();
        let tasks = sqs
            .create_queue()
            .queue_name(format!("{prefix}-tasks"))
            .attributes(QueueAttributeName::VisibilityTimeout, visibility_seconds.to_string())
            .attributes(
                QueueAttributeName::RedrivePolicy,
                json!({"deadLetterTargetArn": arn, "maxReceiveCount": max_receive}).to_string(),
            )
            .send()
            .await
            .expect("create task queue");
        let events = sqs
            .create_queue()
            .queue_name(format!("{prefix}-events"))
            .send()
            .await
            .expect("create events queue");
        TestQueues {
            sqs,
            endpoint,
            tasks: tasks.queue_url().expect("task queue url").to_owned(),
            dlq,
            events: events.queue_url().expect("events url").to_owned(),
            prefix,
            max_receive,
            visibility_seconds,
        }
    }

    /// Messages on a queue: waiting, in flight (received, not yet deleted) and delayed.
    pub async fn messages(&self, queue_url: &str) -> u64 {
        let counted = [
            QueueAttributeName::ApproximateNumberOfMessages,
            QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
            QueueAttributeName::ApproximateNumberOfMessagesDelayed,
        ];
        let out = self
            .sqs
            .get_queue_attributes()
            .queue_url(queue_url)
            .set_attribute_names(Some(counted.to_vec()))
            .send()
            .await
            .expect("queue attributes");
        let attributes = out.attributes().cloned().unwrap_or_default();
        counted.iter().filter_map(|name| attributes.get(name)?.parse::<u64>().ok()).sum()
    }

    /// Wait until a queue holds no message at all (every one received was deleted): nothing is
    /// left that could be delivered again.
    pub async fn wait_until_empty(&self, queue_url: &str) {
        crate::wait_until(&format!("{queue_url} to be empty"), || async {
            self.messages(queue_url).await == 0
        })
        .await;
    }

    pub async fn send(&self, queue_url: &str, body: &str) {
        self.sqs.send_message().queue_url(queue_url).message_body(body).send().await.expect("send message");
    }

    /// Receive (and delete) what arrives on a queue within `wait`.
    pub async fn drain(&self, queue_url: &str, wait: Duration) -> Vec<String> {
        let until = tokio::time::Instant::now() + wait;
        let mut bodies = Vec::new();
        while tokio::time::Instant::now() < until {
            let out = self
                .sqs
                .receive_message()
                .queue_url(queue_url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .send()
                .await
                .expect("receive");
            for message in out.messages() {
                bodies.push(message.body().unwrap_or_default().to_owned());
                if let Some(receipt) = message.receipt_handle() {
                    let _ =
                        self.sqs.delete_message().queue_url(queue_url).receipt_handle(receipt).send().await;
                }
            }
        }
        bodies
    }
}
