//! `process-task`, on the SQS task queue with `ReportBatchItemFailures`: the records of a batch
//! run concurrently (bounded), each in its own span; records to retry come back in
//! `batchItemFailures`, and nothing is deleted here (the event source mapping does that).

use std::panic::AssertUnwindSafe;
use std::time::SystemTime;

use aitasks_providers::Provider;
use aitasks_runtime::worker::{self, MessageLease, Outcome};
use aitasks_runtime::{App, TaskMessage};
use aws_lambda_events::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};
use futures::stream::{self, StreamExt};
use futures::FutureExt;
use lambda_runtime::{Error, LambdaEvent};
use tokio::time::Instant;
use tracing::Instrument;

/// Handle one batch of task messages.
pub async fn handle<P: Provider>(
    app: &App<P>,
    event: LambdaEvent<SqsEvent>,
) -> Result<SqsBatchResponse, Error> {
    let remaining = event.context.deadline().duration_since(SystemTime::now()).unwrap_or_default();
    let deadline = Instant::now() + remaining;
    let failures: Vec<BatchItemFailure> = stream::iter(event.payload.records)
        .map(|record| guarded(app, record, deadline))
        .buffer_unordered(app.settings.runtime.batch_concurrency)
        .filter_map(|failure| async move { failure })
        .collect()
        .await;
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failures;
    Ok(response)
}

/// [`handle_record`], with a panic outside the task's attempt (which the worker catches
/// itself) turned into this record's retry: the rest of the batch carries on.
async fn guarded<P: Provider>(
    app: &App<P>,
    record: SqsMessage,
    deadline: Instant,
) -> Option<BatchItemFailure> {
    let message_id = record.message_id.clone().unwrap_or_default();
    AssertUnwindSafe(handle_record(app, record, deadline)).catch_unwind().await.unwrap_or_else(|panic| {
        tracing::error!(message_id = %message_id, panic = worker::panic_text(panic.as_ref()), "the record panicked; it will be delivered again");
        let mut failure = BatchItemFailure::default();
        failure.item_identifier = message_id;
        Some(failure)
    })
}

/// `Some(failure)` when the record should be delivered again.
async fn handle_record<P: Provider>(
    app: &App<P>,
    record: SqsMessage,
    deadline: Instant,
) -> Option<BatchItemFailure> {
    let message_id = record.message_id.clone().unwrap_or_default();
    let span = tracing::info_span!("record", message_id = %message_id);
    async move {
        let failure = || {
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = message_id.clone();
            Some(failure)
        };
        let receipt = record.receipt_handle.as_deref().unwrap_or_default();
        let Some(message) = record.body.as_deref().and_then(TaskMessage::parse) else {
            // Not a task reference: fail it at once so the redrive policy moves it to the DLQ.
            tracing::warn!("poison message: the body is not a task reference");
            let _ = app.queues.change_visibility(receipt, std::time::Duration::ZERO).await;
            return failure();
        };
        match worker::process(app, message.task_id, Some(MessageLease { receipt_handle: receipt }), deadline).await {
            Ok(Outcome::Ack) => None,
            Ok(Outcome::Retry { delay }) => {
                if let Err(error) = app.queues.change_visibility(receipt, delay).await {
                    tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not set the retry delay; the queue's visibility timeout applies");
                }
                failure()
            }
            Err(error) => {
                // The store is unreachable: leave the message for the visibility timeout.
                tracing::error!(error = %aitasks_runtime::error_chain(&error), "could not work on the task; the message will be retried");
                failure()
            }
        }
    }
    .instrument(span)
    .await
}
