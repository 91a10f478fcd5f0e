//! The backlog each sweep samples for the metrics: the store's work in flight and the task
//! queue's messages.

use aitasks_store::{self as store, StoreError};
use serde::Serialize;

use crate::app::App;

/// Queued and running tasks are counted up to this many each (a bounded look).
const BACKLOG_COUNT_CAP: usize = 100_000;

/// The backlog as one sweep sees it: the store's work in flight and the task queue's messages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BacklogSample {
    #[serde(flatten)]
    pub store: store::Backlog,
    /// Visible, in flight and delayed messages; `None` when SQS did not answer.
    pub queue_messages: Option<u64>,
}

/// Sample the backlog for the metrics (a failed SQS look leaves its figure out).
pub async fn sample_backlog<P>(app: &App<P>) -> Result<BacklogSample, StoreError> {
    let client = store::client(&app.pool).await?;
    let store = store::backlog(&client, BACKLOG_COUNT_CAP).await?;
    drop(client);
    let queue_messages = app
        .queues
        .task_queue_depth()
        .await
        .inspect_err(|error| tracing::warn!(error = %crate::error_chain(error), "could not read the task queue's depth"))
        .ok();
    Ok(BacklogSample { store, queue_messages })
}
