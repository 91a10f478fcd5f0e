//! What a batch submit may have left at the provider, as the lookups and clean-ups of the
//! batch trait (`format.rs`) and each provider's implementation speak of it: what was sent, what
//! was found, where a clean-up is, and which error says the thing is already gone. Its own
//! module so that the providers' modules and the client over them do not import each other.

use std::ops::RangeInclusive;

use chrono::{DateTime, Utc};

use crate::error::ProviderError;

/// The most our clock and the provider's may disagree: a batch listed as made this much before
/// the first submit went out may still be its.
pub const CLOCK_SKEW: chrono::Duration = chrono::Duration::seconds(60);

/// What was sent for a batch row: since when (and until when, if its sending is over), and how
/// many requests a batch made for it holds (its tasks only leave it: between those running now
/// and those it was formed with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub since: DateTime<Utc>,
    pub until: Option<DateTime<Utc>>,
    pub requests: RangeInclusive<usize>,
}

/// What a lookup found at the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No batch made for it.
    Nothing,
    /// The batch made for it, found by its key (OpenAI's metadata, Bedrock's job name).
    Keyed(String),
    /// Batches that match what was sent (Anthropic), oldest first: ours, unless another
    /// stack on the same key made one alike at the same time.
    Matching(Vec<String>),
}

/// Where the clean-up of one provider batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cleanup {
    /// Nothing of it is left there that can be deleted (OpenAI's batch object itself cannot be;
    /// Bedrock's files expire with the bucket's lifecycle rule).
    Done,
    /// The provider is still finishing it (a cancel under way; canceled now if it was running):
    /// try again later.
    NotYet,
}

/// An error that says the thing is not there (HTTP 404): already deleted, nothing to do.
pub(super) fn gone(error: &ProviderError) -> bool {
    matches!(error, ProviderError::ModelUnknown(_))
}
