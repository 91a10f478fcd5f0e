//! How a provider call failed, as a type the runtime reads to decide between retry and failure.
//!
//! An error's text is safe for a log line at any level: what a provider or its model wrote (an
//! error body, a refusal, the checker's problems with an answer) may echo the prompt, so an
//! error carries only the provider's error code, when it is a short token, and the text's size
//! and hash ([`said`]). The words themselves go to DEBUG lines where they are read.

use std::time::Duration;

use aitasks_contracts::ErrorCode;
use sha2::{Digest, Sha256};

/// A failed provider call. Messages never carry the API key or other credentials (the client
/// scrubs them), nor what the provider or the model wrote, only its size and hash.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// HTTP 429. Retryable after `retry_after` when the provider said so.
    #[error("the provider is rate limiting: {message}")]
    RateLimited { retry_after: Option<Duration>, message: String },
    /// No answer within the provider timeout. Retryable.
    #[error("the provider did not answer within {0:?}")]
    Timeout(Duration),
    /// The connection failed. Retryable.
    #[error("could not reach the provider: {0}")]
    Connection(String),
    /// HTTP 5xx or 408. Retryable.
    #[error("the provider failed with HTTP {status}: {message}")]
    Server { status: u16, message: String },
    /// A 2xx answer that is not a chat completion. Retryable.
    #[error("the provider sent a malformed response: {0}")]
    Malformed(String),
    /// The model kept answering outside the schema (every repair turn spent). Retryable.
    #[error("the model's answers kept failing the schema: {0}")]
    LoopFailed(String),
    /// HTTP 401 or 403: the key is wrong. Not retryable.
    #[error("the provider refused the credentials (HTTP {status})")]
    Auth { status: u16 },
    /// HTTP 404 or an unknown model id: not retryable.
    #[error("unknown model: {0}")]
    ModelUnknown(String),
    /// Any other 4xx: the request itself is wrong. Not retryable.
    #[error("the provider rejected the request with HTTP {status}: {message}")]
    Rejected { status: u16, message: String },
    /// The model declined to answer (OpenAI's `refusal`, a `content_filter` stop, Anthropic's
    /// `refusal` stop). Not retryable: asking again asks the same thing.
    #[error("the model refused: {0}")]
    Refused(String),
    /// The answer stopped at the output-token limit (`finish_reason: length`, `max_tokens`).
    /// Not retryable: the same request hits the same limit; no repair turn is spent on it.
    #[error("the answer was cut off at the output-token limit ({limit} tokens)")]
    Truncated { limit: u64 },
    /// A checked answer whose output is over [`aitasks_contracts::OUTPUT_MAX_BYTES`] as an answer
    /// carries it: no task stores it. Not retryable: the same request may well be answered the
    /// same way, and no repair turn is spent on it.
    #[error("the output takes {bytes} bytes in an answer, over the {max} a task stores", max = aitasks_contracts::OUTPUT_MAX_BYTES)]
    OutputTooLarge { bytes: usize },
    /// The task's model profile changed between its create and its run (`AITASK_MODELS`): its
    /// configuration hash is not the one the task was created with. Not retryable.
    #[error("the model profile {0:?} changed since the task was created")]
    ConfigChanged(String),
    /// The cancellation handle fired; the call was abandoned.
    #[error("the call was canceled")]
    Canceled,
    /// The profile's provider-side limits ([`crate::CallGate`]) refused the attempt's first call:
    /// no call was made, and one may be after about `wait`. The worker passes the profile over
    /// for the next of its chain, or gives the task back unworked; it never ends a task.
    #[error("the profile is at its provider limit for about {wait:?}")]
    AtLimit { wait: Duration },
}

impl ProviderError {
    /// The task error code this failure ends a task with (docs/api.md, task error codes).
    pub fn code(&self) -> ErrorCode {
        match self {
            ProviderError::LoopFailed(_) => ErrorCode::LoopFailed,
            ProviderError::Auth { .. } => ErrorCode::ProviderAuth,
            ProviderError::ModelUnknown(_) => ErrorCode::ModelUnknown,
            ProviderError::Canceled => ErrorCode::Canceled,
            ProviderError::Refused(_) => ErrorCode::ModelRefused,
            ProviderError::Truncated { .. } => ErrorCode::OutputTruncated,
            ProviderError::OutputTooLarge { .. } => ErrorCode::OutputTooLarge,
            ProviderError::ConfigChanged(_) => ErrorCode::ModelConfigChanged,
            ProviderError::RateLimited { .. }
            | ProviderError::Timeout(_)
            | ProviderError::Connection(_)
            | ProviderError::Server { .. }
            | ProviderError::Malformed(_)
            | ProviderError::Rejected { .. }
            | ProviderError::AtLimit { .. } => ErrorCode::ProviderError,
        }
    }

    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Timeout(_)
                | ProviderError::Connection(_)
                | ProviderError::Server { .. }
                | ProviderError::Malformed(_)
                | ProviderError::LoopFailed(_)
                | ProviderError::AtLimit { .. }
        )
    }

    /// A failure on the provider's side, not the task's (what the automatic hold counts): a 5xx
    /// or 408, no answer in time, no connection, or a 429 without a usable `Retry-After` (one that
    /// says when to come back is the provider pacing its callers: the retry waits for it).
    pub fn is_provider_side(&self) -> bool {
        match self {
            ProviderError::RateLimited { retry_after, .. } => retry_after.is_none_or(|after| after.is_zero()),
            ProviderError::Timeout(_) | ProviderError::Connection(_) | ProviderError::Server { .. } => true,
            _ => false,
        }
    }

    /// What the task stores and its tenant sees: stable words without the provider's URL, code
    /// or the size of what it wrote, which the worker's log line has (`Display`).
    pub fn public_message(&self) -> String {
        match self {
            ProviderError::RateLimited { .. } => "The provider is rate limiting.".to_owned(),
            ProviderError::Timeout(limit) => {
                format!("The provider did not answer within {} s.", limit.as_secs_f64())
            }
            ProviderError::Connection(_) => "The provider could not be reached.".to_owned(),
            ProviderError::Server { status, .. } => format!("The provider failed with HTTP {status}."),
            ProviderError::Malformed(_) => "The provider sent a malformed response.".to_owned(),
            ProviderError::LoopFailed(_) => "The model's answers kept failing the answer schema.".to_owned(),
            ProviderError::Auth { status } => {
                format!("The provider refused the credentials (HTTP {status}).")
            }
            ProviderError::ModelUnknown(_) => "The provider does not know the model.".to_owned(),
            ProviderError::Rejected { status: status @ 300..=399, .. } => format!(
                "The provider answered with a redirect (HTTP {status}); provider calls follow no redirect, so the profile's baseUrl must be the provider's own address."
            ),
            ProviderError::Rejected { status, .. } => {
                format!("The provider rejected the request with HTTP {status}.")
            }
            ProviderError::Canceled => "The task was canceled.".to_owned(),
            ProviderError::Refused(_) => "The model refused to answer.".to_owned(),
            ProviderError::Truncated { limit } => {
                format!("The answer was cut off at the output-token limit ({limit} tokens).")
            }
            ProviderError::AtLimit { .. } => "The provider's limits were reached.".to_owned(),
            ProviderError::OutputTooLarge { .. } => format!(
                "The answer's output is larger than {} bytes (as an answer carries it), the most a task stores.",
                aitasks_contracts::OUTPUT_MAX_BYTES
            ),
            ProviderError::ConfigChanged(profile) => format!(
                "The model profile {profile:?} changed between the task's create and its run; create the task again."
            ),
        }
    }

    /// How long the provider asked us to wait, when it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. } => *retry_after,
            ProviderError::AtLimit { wait } => Some(*wait),
            _ => None,
        }
    }
}

/// What a provider or its model wrote, as an error (and so a log line) may carry it: the
/// provider's error code when it gave one that is a short token, then the text's length in
/// characters and the first 12 hex digits of its SHA-256, never the text.
/// `said(Some("overloaded_error"), "body", text)` is
/// `overloaded_error; body of 120 chars, sha256 0123456789ab`.
pub(crate) fn said(code: Option<&str>, what: &str, text: &str) -> String {
    let digest = if text.is_empty() {
        format!("empty {what}")
    } else {
        let hash = hex::encode(Sha256::digest(text.as_bytes()));
        format!("{what} of {} chars, sha256 {}", text.chars().count(), &hash[..12])
    };
    match code.filter(|code| is_token(code)) {
        Some(code) => format!("{code}; {digest}"),
        None => digest,
    }
}

/// A provider's error code or type (`rate_limit_exceeded`, `ThrottlingException`): short, and
/// of letters, digits and `_ - . :` only, so it cannot carry a sentence of the prompt.
pub(crate) fn is_token(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

/// Why the profiles could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid AITASK_MODELS: {0}")]
pub struct ProfileError(pub(crate) String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_said_is_its_code_size_and_hash_only() {
        let text = "I will not repeat «the prompt»";
        let hash = hex::encode(Sha256::digest(text.as_bytes()));
        assert_eq!(
            said(Some("overloaded_error"), "body", text),
            format!("overloaded_error; body of 30 chars, sha256 {}", &hash[..12]),
            "characters, not bytes"
        );
        assert_eq!(said(None, "refusal", ""), "empty refusal");
        let sentence = said(Some("the prompt was: hello"), "body", "x");
        assert!(
            sentence.starts_with("body of 1 chars"),
            "a code that is not a token is left out: {sentence}"
        );
    }
}
