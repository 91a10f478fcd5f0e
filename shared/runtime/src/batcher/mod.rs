//! The batcher: deferred tasks through the providers' batch APIs (docs/lifecycle.md, "Deferred
//! tasks"), run by the sweeper as three of its duties.
//!
//! - [`form`]: each batching profile's tasks awaiting a batch become a batch when the group is
//!   full (`batch.maxRecords`, or a file's worth of bytes) or its oldest has waited
//!   `batch.maxWaitSeconds`; a group still below `batch.minRecords` then, tasks near their
//!   window's end, and the tasks of a profile that no longer batches run on-demand instead.
//! - [`look`]: an open batch due for a look is submitted (idempotently: the batch row was
//!   recorded first) or polled; its results are settled ([`results`]), and what they do not
//!   settle goes back to the on-demand path. A batch not done when its tasks' windows are near
//!   their end is given up, its tasks sent on-demand with the slack to spare.
//!   A submit whose answer was lost is looked up at the provider before it is sent again
//!   ([`lookup`]).
//! - [`cleanup`]: an ended batch's copies at the provider (files, batches) are deleted.
//! - [`sample`]: the figures the metrics and the deadline alarm read.
//!
//! Every message it owes it sends itself, and marks unsent what SQS did not take (the sweeper's
//! `sendOwed` duty sends those).

mod cleanup;
mod form;
mod look;
mod lookup;
mod nul;
mod results;
mod sample;

use aitasks_store::{self as store, OwedMessage, StoreError};
use serde::Serialize;

use crate::app::App;

pub use cleanup::{clean_up_batches, MAX_CLEANUP_TRIES};
pub use form::form_batches;
pub use look::look_at_batches;
pub use sample::{sample_deferred, DeferredSample};

/// The most job ids one job-state event may name that [`look_now`] looks up (an event is input).
pub const MAX_CHANGED_JOBS: usize = 10;

/// A provider said these jobs changed state (Bedrock's job-state event, through the stack's
/// EventBridge rule): their open batches are due now, so the sweep that follows reads a finished
/// job's results at once rather than at its next poll. How many named an open batch.
pub async fn look_now<P>(app: &App<P>, provider_batch_ids: &[String]) -> Result<u64, StoreError> {
    let client = store::client(&app.pool).await?;
    let mut due = 0;
    for id in provider_batch_ids.iter().take(MAX_CHANGED_JOBS) {
        if store::look_at_batch_now(&client, id, app.settings.runtime.batch_poll).await? {
            due += 1;
        }
    }
    Ok(due)
}

/// The most a batch's requests hold in all, as stored: what one function reads into memory to
/// write a batch's file, with each line's schema and settings added (20 MB; each provider's own
/// file limit is larger). A batch's result files have no such bound: they are read as a stream
/// and settled a page at a time ([`aitasks_providers::ResultReader`]).
pub const BATCH_MAX_BYTES: u64 = 20_000_000;

/// What the batcher did in one sweep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchSummary {
    /// Batches opened (recorded, their tasks claimed), and the tasks they took.
    pub batches_opened: u64,
    pub batched_tasks: u64,
    /// Deferred tasks sent on-demand instead of waiting for a batch (below `minRecords`, near
    /// their window's end, a profile that no longer batches).
    pub deferred_sent_now: u64,
    /// Batches the provider took, and batches that ended: answered, or not (failed, expired,
    /// canceled, given up, never taken).
    pub batches_submitted: u64,
    pub batches_completed: u64,
    pub batches_failed: u64,
    /// Results that settled their task (succeeded or failed), answers sent to an on-demand
    /// repair turn, and tasks a batch gave back to the on-demand path unanswered.
    pub batch_results_settled: u64,
    pub batch_repairs: u64,
    pub batch_tasks_returned: u64,
    /// Extra batches made for one batch row (submits whose answers were lost) canceled at the
    /// provider, and ended batches whose copies there were deleted.
    pub batch_extras_canceled: u64,
    pub batches_cleaned: u64,
}

/// Send the messages of tasks the batcher put on the on-demand path (marked sent by the
/// statement that did): what SQS does not take is marked unsent, for the sweeper's `sendOwed`.
async fn send_now<P>(app: &App<P>, client: &store::Client, owed: &[OwedMessage]) -> Result<(), StoreError> {
    if owed.is_empty() {
        return Ok(());
    }
    let failed = app.queues.send_tasks(owed).await;
    if !failed.is_empty() {
        tracing::warn!(unsent = failed.len(), "some on-demand sends failed; the sweeper will send them");
        store::mark_unsent(client, &failed).await?;
    }
    Ok(())
}
