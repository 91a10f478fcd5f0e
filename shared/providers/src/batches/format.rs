//! One provider's batch API, as the batch client and the result reader use it: a batch sent,
//! looked at, canceled, looked for after a lost submit and cleaned up once ended, and its
//! results opened and read line by line. One implementation a provider (`openai.rs`,
//! `anthropic.rs`, `bedrock.rs`), each holding what its calls need (the HTTP client, the
//! profile, the timeout, and for Bedrock the AWS configuration); `BatchClient` picks one from
//! the profile, in one place.
//!
//! A lookup ([`BatchFormat::find`]) finds OpenAI's batch by its metadata and Bedrock's job by
//! its name: keyed, so sure. Anthropic's Message Batches carry no key and show no custom id
//! before they end, so its lookup lists the newest batches and keeps those that match what was
//! sent: made since the first submit went out (less [`crate::CLOCK_SKEW`]) with as
//! many requests. Another stack on the same key may have made one such batch too: the caller
//! decides what it may adopt or cancel.

use aitasks_contracts::AiRequest;
use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;

use super::left_behind::{Cleanup, Found, Sent};
use super::line::{BatchLine, BatchPhase, LineOutcome};
use crate::error::ProviderError;

/// A provider's batch API.
#[async_trait]
pub(super) trait BatchFormat: Send + Sync {
    /// Send a batch of `lines`, idempotent on `batch_id` where the provider allows it; the
    /// provider's batch id (a Bedrock job's ARN).
    async fn submit(&self, batch_id: Uuid, lines: &[BatchLine<'_>]) -> Result<String, ProviderError>;

    /// Where the batch is.
    async fn status(&self, batch: &str) -> Result<BatchPhase, ProviderError>;

    /// Cancel (stop) the batch.
    async fn cancel(&self, batch: &str) -> Result<(), ProviderError>;

    /// The provider's batch (or batches) made before for `batch_id`, sent as `sent` says.
    async fn find(&self, batch_id: Uuid, sent: &Sent) -> Result<Found, ProviderError>;

    /// Delete what the provider holds of an ended batch; a running one is canceled first.
    async fn clean_up(&self, batch: &str) -> Result<Cleanup, ProviderError>;

    /// The files to read for one of [`BatchPhase::Done`]'s `results`: the reference itself
    /// (a file id, a URL), or the files listed under it (Bedrock's output prefix).
    async fn result_files(&self, results: &str) -> Result<Vec<String>, ProviderError> {
        Ok(vec![results.to_owned()])
    }

    /// A result file, its body to be read as it arrives.
    async fn open(&self, file: &str) -> Result<reqwest::Response, ProviderError>;

    /// The field of a result line that names its task (`custom_id`, `recordId`).
    fn id_field(&self) -> &'static str;

    /// What a result line (of a task of the batch, `request`) says about its task.
    fn outcome(&self, line: &Value, request: &AiRequest) -> LineOutcome;
}
