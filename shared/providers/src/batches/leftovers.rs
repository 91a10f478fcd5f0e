//! What the provider may hold of a batch besides the one we know of, and deleting what it holds
//! once we are done: a lookup after a submit whose answer was lost ([`BatchClient::find`]), and
//! the clean-up of an ended batch ([`BatchClient::clean_up`]).
//!
//! A lookup finds OpenAI's batch by its metadata and Bedrock's job by its name: keyed, so sure.
//! Anthropic's Message Batches carry no key and show no custom id before they end, so its
//! lookup lists the newest batches and keeps those that match what was sent: made since the
//! first submit went out (less [`CLOCK_SKEW`]) with as many requests. Another stack on the same
//! key may have made one such batch too: the caller decides what it may adopt or cancel.

use std::ops::RangeInclusive;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{anthropic, bedrock, openai, BatchClient};
use crate::error::ProviderError;
use crate::format::Format;
use crate::profiles::ModelProfile;

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

impl BatchClient {
    /// The provider's batch (or batches) made before for `batch_id`: a submit's answer may have
    /// been lost (a timeout, a batcher killed before its commit).
    pub async fn find(
        &self,
        profile: &ModelProfile,
        batch_id: Uuid,
        sent: &Sent,
    ) -> Result<Found, ProviderError> {
        let keyed = |found: Option<String>| found.map_or(Found::Nothing, Found::Keyed);
        match Format::of(profile) {
            Format::OpenAi => openai::existing(&self.call(profile), batch_id).await.map(keyed),
            Format::Anthropic => {
                let found = anthropic::matching(&self.call(profile), sent).await?;
                Ok(if found.is_empty() { Found::Nothing } else { Found::Matching(found) })
            }
            Format::Bedrock => bedrock::find(&self.aws_call(profile)?, batch_id).await.map(keyed),
        }
    }

    /// Delete what the provider holds of a batch we are done with: OpenAI's input, output and
    /// error files; Anthropic's message batch (its requests and results). A batch still running
    /// is canceled first, and deleted on a later call once it has ended. Bedrock's input and
    /// output are S3 objects the bucket's lifecycle rule expires: nothing to do here.
    pub async fn clean_up(
        &self,
        profile: &ModelProfile,
        provider_batch_id: &str,
    ) -> Result<Cleanup, ProviderError> {
        match Format::of(profile) {
            Format::OpenAi => openai::clean_up(&self.call(profile), provider_batch_id).await,
            Format::Anthropic => anthropic::clean_up(&self.call(profile), provider_batch_id).await,
            Format::Bedrock => Ok(Cleanup::Done),
        }
    }
}

/// An error that says the thing is not there (HTTP 404): already deleted, nothing to do.
pub(super) fn gone(error: &ProviderError) -> bool {
    matches!(error, ProviderError::ModelUnknown(_))
}
