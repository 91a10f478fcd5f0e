//! What the provider may hold of a batch besides the one we know of, and deleting what it holds
//! once we are done: a lookup after a submit whose answer was lost ([`BatchClient::find`]), and
//! the clean-up of an ended batch ([`BatchClient::clean_up`]).
//!
//! A lookup finds OpenAI's batch by its metadata and Bedrock's job by its name: keyed, so sure.
//! Anthropic's Message Batches carry no key and show no custom id before they end, so its
//! lookup lists the newest batches and keeps those that match what was sent: made since the
//! first submit went out (less [`CLOCK_SKEW`]) with as many requests. Another stack on the same
//! key may have made one such batch too: the caller decides what it may adopt or cancel.

use uuid::Uuid;

use super::left_behind::{Cleanup, Found, Sent};
use super::{anthropic, bedrock, openai, BatchClient};
use crate::error::ProviderError;
use crate::format::Format;
use crate::profiles::ModelProfile;

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
