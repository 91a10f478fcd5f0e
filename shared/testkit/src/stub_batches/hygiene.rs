//! What the batch-hygiene tests script and count on [`StubBatches`]: creates answered late, a
//! lagging list, another stack's batch on the same key, and the deletes.

use std::time::Duration;

use serde_json::json;

use super::{Api, Batch, Stage, StubBatches};

impl StubBatches {
    /// The next `count` creates (either API) make their batch at once and answer `by` later: a
    /// client that gives up first does not know the provider has it.
    pub fn answer_creates_late(&self, count: usize, by: Duration) {
        let mut stubs = self.lock();
        stubs.late_creates = count;
        stubs.late_by = by;
    }

    /// Anthropic's list shows a batch only `by` after it was made (an eventually consistent list).
    pub fn lag_the_list(&self, by: Duration) {
        self.lock().list_lag = by;
    }

    /// Anthropic message batches the list shows now (those made at least the list's lag ago).
    pub fn anthropic_batches_listed(&self) -> usize {
        let stubs = self.lock();
        let shown_before =
            chrono::Utc::now() - chrono::Duration::from_std(stubs.list_lag).unwrap_or_default();
        stubs.batches.iter().filter(|b| b.api == Api::Anthropic && b.created_at <= shown_before).count()
    }

    /// Files deleted (`DELETE /files/{id}`).
    pub fn file_deletes(&self) -> usize {
        self.lock().file_deletes
    }

    /// Message batches deleted (`DELETE /messages/batches/{id}`).
    pub fn batch_deletes(&self) -> usize {
        self.lock().batch_deletes
    }

    /// Files the provider still holds (uploads and results).
    pub fn files_held(&self) -> usize {
        self.lock().files.len()
    }

    /// Anthropic message batches the provider still holds, and how many of them are not ended.
    pub fn anthropic_batches_held(&self) -> (usize, usize) {
        let stubs = self.lock();
        let held: Vec<&Batch> = stubs.batches.iter().filter(|b| b.api == Api::Anthropic).collect();
        let running =
            held.iter().filter(|b| matches!(b.stage, Stage::InProgress | Stage::Validating)).count();
        (held.len(), running)
    }

    /// A message batch of `requests` requests made by someone else with the same key (another
    /// stack): listed like ours, its custom ids none of ours. Not counted as a create.
    pub fn foreign_anthropic_batch(&self, requests: usize) -> String {
        let mut stubs = self.lock();
        stubs.next += 1;
        let id = format!("msgbatch_{}", stubs.next);
        let lines = (0..requests).map(|n| (format!("foreign-{n}"), json!({}))).collect();
        stubs.batches.push(Batch::anthropic(id.clone(), lines));
        id
    }
}
