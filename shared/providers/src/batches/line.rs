//! What a batch is made of and what comes back: a line of a batch, where the batch is at the
//! provider, and what one result line says about its task. The words every batch format, the
//! result reader and the runtime speak, in a module of their own so that none of them imports
//! another for them.

use aitasks_contracts::AiRequest;
use uuid::Uuid;

use crate::client::{Completion, Resume};
use crate::error::ProviderError;

/// The longest result line: a longer one is its task's [`ProviderError::Malformed`].
pub const MAX_RESULT_LINE_BYTES: usize = 1024 * 1024;

/// One task of a batch: its id is the line's `custom_id` (`recordId` on Bedrock).
#[derive(Debug, Clone, Copy)]
pub struct BatchLine<'a> {
    pub task_id: Uuid,
    pub request: &'a AiRequest,
}

/// Where a batch is at the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchPhase {
    /// Validating, queued, in progress, finalizing, stopping.
    Working,
    /// The provider is done with it: `results` are what [`crate::BatchClient::results`] reads
    /// (OpenAI's output and error file ids, Anthropic's `results_url`, Bedrock's S3 output
    /// prefix); `stopped` says why it did not complete (`None` when it completed).
    Done { results: Vec<String>, stopped: Option<String> },
}

/// What one result line says about its task.
#[derive(Debug, Clone, PartialEq)]
pub enum LineOutcome {
    /// A checked answer; its usage has one call, priced at the batch prices.
    Answered(Completion),
    /// The answer failed the checker: the on-demand repair turn starts from here.
    Invalid(Resume),
    /// The line's error, in the classes of an on-demand call's.
    Failed(ProviderError),
    /// Nobody answered it: the batch expired or was canceled before this task's turn. Not the
    /// task's failure: it runs on-demand with its attempt uncounted.
    Unanswered(String),
}

/// One result line.
#[derive(Debug, Clone, PartialEq)]
pub struct LineResult {
    pub task_id: Uuid,
    pub outcome: LineOutcome,
}
