//! Messages a queue lost. A task message lives in two places: the store marks it sent, the
//! queue holds it. When the queue holds fewer than the store says it owes (a local SQS-compatible
//! server restarted empty, a purged queue), every owed message sent before the look is sent
//! again. One that was not lost becomes a duplicate, which claims nothing (the first delivery
//! claims the task, the second finds it running or settled); the count of those that may be
//! duplicates is reported.

use std::time::Duration;

use aitasks_store as store;
use serde::Serialize;

use super::pages::Pages;
use crate::app::App;

/// What a look for lost messages found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// The queue's own count when the look began.
    pub in_queue: u64,
    /// Messages sent again.
    pub resent: u64,
    /// Of those, how many may be duplicates: at most one per message the queue still held.
    pub possible_duplicates: u64,
    /// Sends that failed (given back to the sweeper).
    pub failed: u64,
}

/// Compare the queue's count with what the store owes (messages sent more than `older_than`
/// ago and not yet claimed); when the queue holds fewer, send those again, within `pages` (what
/// is left waits for the next sweep, which looks again). A queue that cannot be asked for its
/// count is left alone (and logged).
pub(super) async fn restore<P>(
    app: &App<P>,
    client: &store::Client,
    older_than: Duration,
    mut pages: Pages,
) -> Result<Restored, store::StoreError> {
    let in_queue = match app.queues.task_queue_depth().await {
        Ok(depth) => depth,
        Err(error) => {
            tracing::warn!(error = %error, "could not count the task queue's messages; not looking for lost ones");
            return Ok(Restored::default());
        }
    };
    let Some(cutoff) = store::owed_beyond(client, in_queue, older_than).await? else {
        return Ok(Restored { in_queue, ..Restored::default() });
    };
    let mut restored = Restored { in_queue, ..Restored::default() };
    while pages.next() {
        let owed = store::take_lost(client, cutoff, pages.size()).await?;
        pages.took(owed.len());
        let failed = app.queues.send_tasks(&owed).await;
        if !failed.is_empty() {
            store::mark_unsent(client, &failed).await?;
            pages.stalled();
        }
        restored.resent += (owed.len() - failed.len()) as u64;
        restored.failed += failed.len() as u64;
    }
    restored.possible_duplicates = restored.resent.min(in_queue);
    tracing::warn!(
        in_queue,
        resent = restored.resent,
        possible_duplicates = restored.possible_duplicates,
        "the task queue held fewer messages than the store owes; sent them again"
    );
    Ok(restored)
}
