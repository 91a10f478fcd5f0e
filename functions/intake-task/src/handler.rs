//! `intake-task`, on the SQS intake queue with `ReportBatchItemFailures`: each record is an
//! intake message (`{"appId"?, "task": <create body>, "taskToken"?}`), created as `POST
//! /v1/tasks` would create it for the tenant its queue takes, when the record's `SenderId` (set
//! by SQS from the sender's credentials) is listed for that tenant (`aitasks_runtime::intake`). The
//! records are taken side by side (bounded); those to deliver again, or to dead-letter, come
//! back in `batchItemFailures`.

use aitasks_runtime::{intake, App};
use aws_lambda_events::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};
use futures::stream::{self, StreamExt};
use lambda_runtime::{Error, LambdaEvent};
use tracing::Instrument;

/// Records of a delivery taken at once.
const CONCURRENT_RECORDS: usize = 10;

/// Handle one delivery of intake messages.
pub async fn handle<P>(app: &App<P>, event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    let failures: Vec<BatchItemFailure> = stream::iter(event.payload.records)
        .map(|record: SqsMessage| async move {
            let message_id = record.message_id.as_deref().unwrap_or_default();
            let span = tracing::info_span!("intake record", message_id);
            let sender = record.attributes.get("SenderId").map(String::as_str);
            let body = record.body.as_deref().unwrap_or_default();
            let taken = intake::take(app, queue_name(&record), sender, body).instrument(span).await;
            taken.report_failed().then(|| failure(&record))
        })
        .buffer_unordered(CONCURRENT_RECORDS)
        .filter_map(|failed| async move { failed })
        .collect()
        .await;
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failures;
    Ok(response)
}

/// The queue a record came from: the last part of its `eventSourceARN`.
fn queue_name(record: &SqsMessage) -> &str {
    record.event_source_arn.as_deref().and_then(|arn| arn.rsplit(':').next()).unwrap_or_default()
}

fn failure(record: &SqsMessage) -> BatchItemFailure {
    let mut failure = BatchItemFailure::default();
    failure.item_identifier = record.message_id.clone().unwrap_or_default();
    failure
}
