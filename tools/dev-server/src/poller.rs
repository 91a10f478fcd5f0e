//! The SQS event source mappings, locally: long-poll batches of up to 10, hand them to
//! process-task (the task queue) or intake-task (the intake queue) as an `SqsEvent`, then delete
//! exactly the records not returned in `batchItemFailures` (all of them stay when the invocation
//! fails).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aitasks_runtime::App;
use aws_lambda_events::sqs::{SqsEvent, SqsMessage};
use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, MessageSystemAttributeName};
use lambda_runtime::{Context, LambdaEvent};
use tracing::Instrument;

/// The queue a poller takes from, and the function it feeds.
#[derive(Clone)]
pub(crate) enum Source {
    /// The task queue, into process-task.
    Tasks,
    /// An intake queue (`AITASK_LOCAL_INTAKE_QUEUE_URL`), into intake-task.
    Intake { url: String },
}

pub(crate) struct Poller {
    pub app: Arc<App>,
    /// The function timeout: each batch gets this deadline, as in Lambda.
    pub function_timeout: Duration,
    pub wait_seconds: i32,
    pub source: Source,
}

impl Poller {
    pub(crate) async fn run(self) {
        let sqs = self.app.queues.sqs().clone();
        let url = match &self.source {
            Source::Tasks => self.app.queues.task_queue_url().to_owned(),
            Source::Intake { url } => url.clone(),
        };
        // Records carry their queue's ARN, as the event source mapping's do (intake-task reads
        // the queue's name from it).
        let queue_name = url.trim_end_matches('/').rsplit('/').next().unwrap_or_default().to_owned();
        let arn = format!("arn:aws:sqs:us-east-1:000000000000:{queue_name}");
        loop {
            let received = sqs
                .receive_message()
                .queue_url(&url)
                .max_number_of_messages(10)
                .wait_time_seconds(self.wait_seconds)
                .message_system_attribute_names(MessageSystemAttributeName::All)
                .send()
                .await;
            let messages = match received {
                Ok(output) => output.messages.unwrap_or_default(),
                Err(error) => {
                    tracing::warn!(error = %aws_sdk_sqs::error::DisplayErrorContext(&error), "receive failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if messages.is_empty() {
                continue;
            }
            let mut event = SqsEvent::default();
            event.records = messages.iter().map(|message| to_record(message, &arn)).collect();
            let mut context = Context::default();
            let span = crate::invocation::start(&mut context);
            let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
            context.deadline = now_ms + self.function_timeout.as_millis() as u64;
            let invocation = LambdaEvent::new(event, context);
            let handled = match &self.source {
                Source::Tasks => process_task::handle(&self.app, invocation).instrument(span).await,
                Source::Intake { .. } => intake_task::handle(&self.app, invocation).instrument(span).await,
            };
            let failed: HashSet<String> = match handled {
                Ok(response) => response.batch_item_failures.into_iter().map(|f| f.item_identifier).collect(),
                Err(error) => {
                    tracing::error!(error = %aitasks_runtime::error_chain(error.as_ref()), "the invocation failed; the whole batch will be retried");
                    continue;
                }
            };
            let entries: Vec<_> = messages
                .iter()
                .filter(|m| !m.message_id().is_some_and(|id| failed.contains(id)))
                .enumerate()
                .filter_map(|(i, m)| {
                    DeleteMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .receipt_handle(m.receipt_handle().unwrap_or_default())
                        .build()
                        .ok()
                })
                .collect();
            if !entries.is_empty() {
                if let Err(error) =
                    sqs.delete_message_batch().queue_url(&url).set_entries(Some(entries)).send().await
                {
                    tracing::warn!(error = %aws_sdk_sqs::error::DisplayErrorContext(&error), "delete failed; the messages will come back");
                }
            }
        }
    }
}

fn to_record(message: &aws_sdk_sqs::types::Message, arn: &str) -> SqsMessage {
    let mut record = SqsMessage::default();
    record.event_source_arn = Some(arn.to_owned());
    record.message_id = message.message_id().map(str::to_owned);
    record.receipt_handle = message.receipt_handle().map(str::to_owned);
    record.body = message.body().map(str::to_owned);
    record.md5_of_body = message.md5_of_body().map(str::to_owned);
    record.event_source = Some("aws:sqs".into());
    if let Some(attributes) = message.attributes() {
        record.attributes = attributes.iter().map(|(k, v)| (k.as_str().to_owned(), v.clone())).collect();
    }
    record
}
