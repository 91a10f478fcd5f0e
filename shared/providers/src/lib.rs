//! aitasks model providers.
//!
//! - [`ModelProfiles`]: which endpoint and model a `modelId` means (`AITASK_MODELS`, with the
//!   `default` profile falling back to `OPENAI_BASE_URL` / `OPENAI_API_KEY` /
//!   `AITASK_DEFAULT_MODEL`); a profile gives the model reference stored on a task and its
//!   configuration hash (secrets excluded). Credentials never sit in it: a profile names the
//!   secrets of its key and of its credential headers ([`SecretHeader`]), and a plain header
//!   named like a credential is refused.
//! - [`Provider`]: one attempt of a task, cancellable; [`HttpProvider`] implements it for any
//!   OpenAI-compatible endpoint (`response_format: json_schema`, strict) and for Anthropic's
//!   Messages API (a forced tool call whose input schema is the answer's), with the profile's
//!   settings (temperature, token field and cap, seed, reasoning effort, headers, timeout). An
//!   answer that fails the contract checker gets at most [`MAX_REPAIR_TURNS`] repair turns,
//!   then [`ProviderError::LoopFailed`]; a refusal or a truncated answer is its own error.
//!   A profile that streams (the default) reads each answer as it is written and tells the
//!   attempt's [`Tap`] its text (live output); the answer is then read as a whole one is.
//! - [`BatchClient`]: deferred tasks through OpenAI's Batch API, Anthropic's Message Batches
//!   and Bedrock batch inference, each line the on-demand request and each result read and
//!   checked as an on-demand answer is; an invalid answer becomes a [`Resume`] for the one
//!   on-demand repair turn ([`Provider::repair_gated`]). A profile's `batch` object
//!   ([`BatchSettings`]) turns it on.
//! - [`ProviderError`]: retryable or not, and the task error code, as a type. The client makes
//!   no retries of its own: every other retry is an attempt, counted on the task.

mod anthropic;
mod anthropic_stream;
mod batch_settings;
mod batches;
mod bedrock;
mod bedrock_bound;
mod bedrock_sdk;
mod bedrock_stream;
mod client;
mod credentials;
mod error;
mod format;
mod gate;
mod openai;
mod openai_stream;
mod prices;
mod profiles;
mod settings;
mod sse;
mod tap;
mod wire;

pub use anthropic::ANTHROPIC_VERSION;
pub use batches::{
    BatchAws, BatchClient, BatchLine, BatchPhase, Cleanup, Found, LineOutcome, LineResult, ResultReader,
    Sent, CLOCK_SKEW, MAX_RESULT_LINE_BYTES, PAGE_BYTES, PAGE_LINES,
};
pub use client::{Completion, HttpProvider, Provider, Resume, Usage, MAX_REPAIR_GATE_WAIT, MAX_REPAIR_TURNS};
pub use credentials::{
    profile_header_secrets, profile_header_variable, profile_key_secrets, profile_key_variable, ApiKey,
    SecretHeader, CREDENTIAL_HEADER_WORDS,
};
pub use error::{ProfileError, ProviderError};
pub use gate::{CallEstimate, CallGate, GateFuture, NoLimits, Passed};
pub use profiles::{
    BatchSettings, CallLimits, CallSettings, ModelProfile, ModelProfiles, Prices, TokenLimitField,
    ANTHROPIC_BASE_URL, DEFAULT_BASE_URL, DEFAULT_MODEL, MAX_BATCH_RECORDS, MAX_BATCH_WAIT_SECONDS,
};
pub use tap::{NoTap, Tap};
pub use tokio_util::sync::CancellationToken;
