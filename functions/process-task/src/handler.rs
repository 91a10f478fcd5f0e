//! `process-task`, on the SQS task queue with `ReportBatchItemFailures`: the records of a delivery
//! are claimed in one statement and worked side by side (bounded), each in its own span, and
//! the successes that finish together are settled together (`aitasks_runtime::worker`).
//! Records to retry come back in `batchItemFailures`, and nothing is deleted here (the event
//! source mapping does that).

use std::panic::AssertUnwindSafe;
use std::time::SystemTime;

use aitasks_providers::Provider;
use aitasks_runtime::worker::{process_records, Outcome, QueueMessage};
use aitasks_runtime::{App, TaskMessage};
use aws_lambda_events::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};
use futures::FutureExt;
use lambda_runtime::{Error, LambdaEvent};
use tokio::time::Instant;

/// Handle one delivery of task messages.
pub async fn handle<P: Provider>(
    app: &App<P>,
    event: LambdaEvent<SqsEvent>,
) -> Result<SqsBatchResponse, Error> {
    let remaining = event.context.deadline().duration_since(SystemTime::now()).unwrap_or_default();
    let deadline = Instant::now() + remaining;
    let records = event.payload.records;
    let mut failures: Vec<BatchItemFailure> = Vec::new();
    let mut work: Vec<&SqsMessage> = Vec::with_capacity(records.len());
    let mut messages: Vec<QueueMessage<'_>> = Vec::with_capacity(records.len());
    for record in &records {
        match record.body.as_deref().and_then(TaskMessage::parse) {
            Some(message) => {
                work.push(record);
                messages.push(QueueMessage {
                    task_id: message.task_id,
                    receipt: receipt(record),
                    group: record.attributes.get("MessageGroupId").map(String::as_str),
                    receives: record.attributes.get("ApproximateReceiveCount").and_then(|n| n.parse().ok()),
                });
            }
            None => {
                // Not a task reference: fail it at once so the redrive policy moves it to the DLQ.
                tracing::warn!(
                    message_id = record.message_id.as_deref().unwrap_or_default(),
                    "poison message: the body is not a task reference"
                );
                let _ = app.queues.change_visibility(receipt(record), std::time::Duration::ZERO).await;
                failures.push(failure(record));
            }
        }
    }
    // A panic outside an attempt (which the worker catches itself) retries the whole delivery.
    let outcomes = AssertUnwindSafe(process_records(app, &messages, deadline)).catch_unwind().await;
    match outcomes {
        Ok(outcomes) => {
            for (record, outcome) in work.iter().zip(outcomes) {
                if let Some(failed) = answer(app, record, outcome).await {
                    failures.push(failed);
                }
            }
        }
        Err(panic) => {
            tracing::error!(
                panic = aitasks_runtime::panic_text(panic.as_ref()),
                "the delivery panicked; its records will be delivered again"
            );
            failures.extend(work.iter().map(|record| failure(record)));
        }
    }
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failures;
    Ok(response)
}

fn receipt(record: &SqsMessage) -> &str {
    record.receipt_handle.as_deref().unwrap_or_default()
}

fn failure(record: &SqsMessage) -> BatchItemFailure {
    let mut failure = BatchItemFailure::default();
    failure.item_identifier = record.message_id.clone().unwrap_or_default();
    failure
}

/// `Some(failure)` when the record should be delivered again.
async fn answer<P>(
    app: &App<P>,
    record: &SqsMessage,
    outcome: Result<Outcome, aitasks_store::StoreError>,
) -> Option<BatchItemFailure> {
    match outcome {
        Ok(Outcome::Ack) => None,
        Ok(Outcome::Retry { delay }) => {
            if let Err(error) = app.queues.change_visibility(receipt(record), delay).await {
                tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not set the retry delay; the queue's visibility timeout applies");
            }
            Some(failure(record))
        }
        Err(error) => {
            // The store is unreachable: leave the message for the visibility timeout.
            tracing::error!(error = %aitasks_runtime::error_chain(&error), "could not work on the task; the message will be retried");
            Some(failure(record))
        }
    }
}
