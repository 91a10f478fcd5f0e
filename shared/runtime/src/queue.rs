//! The SQS side: task messages, message visibility, and completion events.

use std::time::Duration;

use aitasks_store::{OwedMessage, PendingEvent};
use aws_sdk_sqs::types::{QueueAttributeName, SendMessageBatchRequestEntry};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The body of a task message: `{"taskId": "<uuid>"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskMessage {
    pub task_id: Uuid,
}

impl TaskMessage {
    /// Parse a message body; `None` for anything that is not a task reference (a poison
    /// message, left to the queue's redrive policy).
    pub fn parse(body: &str) -> Option<TaskMessage> {
        serde_json::from_str(body).ok()
    }

    pub fn body(&self) -> String {
        serde_json::json!({"taskId": self.task_id}).to_string()
    }
}

/// The message group of an application's task messages. On a standard queue the group makes
/// SQS fair queues keep one application's backlog from delaying the others' messages
/// (docs/architecture.md, "Fairness"). SQS takes up to 128 characters of ASCII letters, digits
/// and punctuation; an application id outside that is represented by its hash.
pub fn message_group(app_id: &str) -> String {
    let fits = !app_id.is_empty() && app_id.len() <= 128 && app_id.chars().all(|c| c.is_ascii_graphic());
    if fits {
        app_id.to_owned()
    } else {
        format!("app-{}", &aitasks_contracts::canonical_hash(&serde_json::Value::from(app_id))[..40])
    }
}

/// The longest delay SQS gives a message.
const MAX_DELAY_SECONDS: i32 = 900;

/// A delay as SQS takes it: whole seconds, rounded up, at most its 15 minutes.
fn delay_seconds(delay: Duration) -> i32 {
    i32::try_from(delay.as_secs_f64().ceil() as u64).unwrap_or(MAX_DELAY_SECONDS).min(MAX_DELAY_SECONDS)
}

/// An SQS call failed.
#[derive(Debug, thiserror::Error)]
#[error("SQS {operation} failed: {message}")]
pub struct QueueError {
    pub operation: &'static str,
    pub message: String,
}

fn queue_error(operation: &'static str, error: impl std::error::Error) -> QueueError {
    // The SDK's Display is terse; the source chain says what went wrong.
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    QueueError { operation, message }
}

/// The task queue and the optional events queue.
#[derive(Debug, Clone)]
pub struct Queues {
    sqs: aws_sdk_sqs::Client,
    task_queue_url: String,
    events_queue_url: Option<String>,
}

impl Queues {
    pub fn new(sqs: aws_sdk_sqs::Client, task_queue_url: String, events_queue_url: Option<String>) -> Queues {
        Queues { sqs, task_queue_url, events_queue_url }
    }

    pub fn sqs(&self) -> &aws_sdk_sqs::Client {
        &self.sqs
    }

    pub fn task_queue_url(&self) -> &str {
        &self.task_queue_url
    }

    /// Send one task's message, in its application's message group.
    pub async fn send_task(&self, task_id: Uuid, app_id: &str) -> Result<(), QueueError> {
        self.sqs
            .send_message()
            .queue_url(&self.task_queue_url)
            .message_body(TaskMessage { task_id }.body())
            .message_group_id(message_group(app_id))
            .send()
            .await
            .map_err(|e| queue_error("SendMessage", e))?;
        Ok(())
    }

    /// Send one task's message again, in its message `group` (its application's, from
    /// [`message_group`]; none on a queue that has none), visible after `delay` (SQS delays at
    /// most 15 minutes).
    pub async fn send_task_after(
        &self,
        task_id: Uuid,
        group: Option<&str>,
        delay: Duration,
    ) -> Result<(), QueueError> {
        let seconds = delay_seconds(delay);
        self.sqs
            .send_message()
            .queue_url(&self.task_queue_url)
            .message_body(TaskMessage { task_id }.body())
            .set_message_group_id(group.map(str::to_owned))
            .delay_seconds(seconds)
            .send()
            .await
            .map_err(|e| queue_error("SendMessage", e))?;
        Ok(())
    }

    /// Send many tasks' messages, ten to a batch. Returns the ids whose send failed.
    pub async fn send_tasks(&self, owed: &[OwedMessage]) -> Vec<Uuid> {
        self.send_tasks_after(owed, |_| Duration::ZERO).await
    }

    /// [`Queues::send_tasks`], each message visible after its own `delay` (SQS delays at most 15
    /// minutes; none: the queue's own).
    pub async fn send_tasks_after(
        &self,
        owed: &[OwedMessage],
        delay: impl Fn(&OwedMessage) -> Duration,
    ) -> Vec<Uuid> {
        let mut failed = Vec::new();
        for chunk in owed.chunks(10) {
            let entries: Vec<_> = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, message)| {
                    SendMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .message_body(TaskMessage { task_id: message.task_id }.body())
                        .message_group_id(message_group(&message.app_id))
                        .set_delay_seconds(Some(delay_seconds(delay(message))).filter(|seconds| *seconds > 0))
                        .build()
                        .ok()
                })
                .collect();
            match self
                .sqs
                .send_message_batch()
                .queue_url(&self.task_queue_url)
                .set_entries(Some(entries))
                .send()
                .await
            {
                Ok(output) => {
                    for entry in output.failed() {
                        if let Some(message) = entry.id().parse::<usize>().ok().and_then(|i| chunk.get(i)) {
                            failed.push(message.task_id);
                        }
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %queue_error("SendMessageBatch", error), "re-send failed");
                    failed.extend(chunk.iter().map(|message| message.task_id));
                }
            }
        }
        failed
    }

    /// The messages the task queue holds: visible, in flight and delayed (SQS's approximate
    /// counts).
    pub async fn task_queue_depth(&self) -> Result<u64, QueueError> {
        let names = [
            QueueAttributeName::ApproximateNumberOfMessages,
            QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
            QueueAttributeName::ApproximateNumberOfMessagesDelayed,
        ];
        let output = self
            .sqs
            .get_queue_attributes()
            .queue_url(&self.task_queue_url)
            .set_attribute_names(Some(names.to_vec()))
            .send()
            .await
            .map_err(|e| queue_error("GetQueueAttributes", e))?;
        let attributes = output.attributes();
        Ok(names
            .iter()
            .filter_map(|name| attributes.and_then(|a| a.get(name)))
            .filter_map(|count| count.parse::<u64>().ok())
            .sum())
    }

    /// Hide (or show) a received message for `timeout` from now.
    pub async fn change_visibility(&self, receipt_handle: &str, timeout: Duration) -> Result<(), QueueError> {
        let seconds = i32::try_from(timeout.as_secs()).unwrap_or(43_200).min(43_200);
        self.sqs
            .change_message_visibility()
            .queue_url(&self.task_queue_url)
            .receipt_handle(receipt_handle)
            .visibility_timeout(seconds)
            .send()
            .await
            .map_err(|e| queue_error("ChangeMessageVisibility", e))?;
        Ok(())
    }

    /// Send completion events to the events queue (this queue alone), ten to a request. Returns
    /// the ids it took. Without an events queue nobody listens: every event counts as taken.
    pub async fn send_events(&self, events: &[PendingEvent]) -> Vec<i64> {
        let Some(url) = &self.events_queue_url else {
            return events.iter().map(|e| e.id).collect();
        };
        let mut delivered = Vec::with_capacity(events.len());
        for chunk in events.chunks(10) {
            let entries: Vec<_> = chunk
                .iter()
                .filter_map(|event| {
                    SendMessageBatchRequestEntry::builder()
                        .id(event.id.to_string())
                        .message_body(event.payload.to_string())
                        .build()
                        .ok()
                })
                .collect();
            match self.sqs.send_message_batch().queue_url(url).set_entries(Some(entries)).send().await {
                Ok(output) => {
                    delivered.extend(output.successful().iter().filter_map(|ok| ok.id().parse::<i64>().ok()));
                }
                Err(error) => {
                    tracing::warn!(error = %queue_error("SendMessageBatch", error), "could not send events to the events queue")
                }
            }
        }
        delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_group_is_the_application_or_its_hash() {
        assert_eq!(message_group("app-1"), "app-1");
        assert_eq!(message_group("tenant:42/eu"), "tenant:42/eu");
        for awkward in ["", "with space", "ünïcode", &"x".repeat(129)] {
            let group = message_group(awkward);
            assert!(group.starts_with("app-") && group.len() == 44, "{group}");
            assert!(group.chars().all(|c| c.is_ascii_graphic()));
        }
        assert_ne!(message_group("a b"), message_group("a  b"), "distinct applications, distinct groups");
    }

    #[test]
    fn only_task_references_parse() {
        let id = Uuid::new_v4();
        assert_eq!(
            TaskMessage::parse(&TaskMessage { task_id: id }.body()),
            Some(TaskMessage { task_id: id })
        );
        for poison in [
            "",
            "hello",
            "{}",
            r#"{"taskId": "nope"}"#,
            r#"{"taskId": 5}"#,
            r#"{"taskId": "8f0e5a8e-0c5e-4f43-9d39-8f1f3c0a9b11", "x": 1}"#,
        ] {
            assert_eq!(TaskMessage::parse(poison), None, "{poison}");
        }
    }
}
