//! aitasks model providers.
//!
//! - [`ModelProfiles`]: which endpoint and model a `modelId` means (`AITASK_MODELS`, with the
//!   `default` profile falling back to `OPENAI_BASE_URL` / `OPENAI_API_KEY` /
//!   `AITASK_DEFAULT_MODEL`); a profile gives the model reference stored on a task and its
//!   configuration hash (secrets excluded).
//! - [`Provider`]: one attempt of a task, cancellable; [`OpenAiClient`] implements it for any
//!   OpenAI-compatible endpoint with `response_format: json_schema` in strict mode, temperature
//!   0 and a per-kind token cap. An answer that fails the contract checker gets at most
//!   [`MAX_REPAIR_TURNS`] repair turns, then [`ProviderError::LoopFailed`].
//! - [`ProviderError`]: retryable or not, and the task error code, as a type. The client makes
//!   no retries of its own: every other retry is an attempt, counted on the task.

mod client;
mod error;
mod profiles;

pub use client::{Completion, OpenAiClient, Provider, Usage, MAX_REPAIR_TURNS};
pub use error::ProviderError;
pub use profiles::{
    ApiKey, ModelProfile, ModelProfiles, Prices, ProfileError, DEFAULT_BASE_URL, DEFAULT_MODEL,
};
pub use tokio_util::sync::CancellationToken;
