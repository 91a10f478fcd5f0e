//! Deferred tasks through the providers' batch APIs: OpenAI's Files and Batches API
//! ([`openai`]), Anthropic's Message Batches ([`anthropic`]) and Amazon Bedrock's batch inference
//! jobs over S3 ([`bedrock`], signed by [`aws`]), each an implementation of one trait
//! ([`format::BatchFormat`]) that [`BatchClient`] picks from the profile in one place.
//!
//! A batch line is the request the on-demand call sends (the same body function), keyed by the
//! task id; a result line is read by the same reader and checker as an on-demand answer, its
//! usage priced at the profile's batch prices ([`judge`]). An answer that fails the checker comes
//! back as a [`crate::Resume`] for the on-demand repair turn ([`crate::Provider::repair_gated`]).
//!
//! Everything a provider sends is input: result files are read as a stream, a page at a time
//! ([`ResultReader`]), whatever their size, each line to at most [`MAX_RESULT_LINE_BYTES`]; a
//! line naming a task that is not in the batch, or no task at all, is left out (counted in a
//! log line); errors name what the provider wrote by size and hash only, and never carry a key.
//!
//! The modules below import the trait ([`format`]), the words ([`line`], [`left_behind`]) and
//! the helpers ([`judge`]), never this one nor each other (Bedrock's signing aside).

mod anthropic;
mod aws;
mod bedrock;
mod format;
mod judge;
mod left_behind;
mod line;
mod openai;
mod reader;
mod splitter;

use std::collections::HashMap;
use std::time::Duration;

use aitasks_contracts::AiRequest;
use uuid::Uuid;

pub use aws::BatchAws;
pub use left_behind::{Cleanup, Found, Sent, CLOCK_SKEW};
pub use line::{BatchLine, BatchPhase, LineOutcome, LineResult, MAX_RESULT_LINE_BYTES};
pub use reader::{ResultReader, PAGE_BYTES, PAGE_LINES};

use anthropic::AnthropicBatches;
use aws::AwsCall;
use bedrock::BedrockBatches;
use format::BatchFormat;
use openai::OpenAiBatches;

use crate::error::ProviderError;
use crate::format::Format;
use crate::profiles::ModelProfile;
use crate::tap::NoTap;
use crate::wire::Call;

/// The batch APIs of every provider, chosen by the profile (as [`crate::HttpProvider`] is).
#[derive(Debug, Clone)]
pub struct BatchClient {
    http: reqwest::Client,
    timeout: Duration,
    aws: Option<BatchAws>,
}

impl BatchClient {
    /// A client whose calls give up after `timeout` each (an upload of a whole batch is one).
    pub fn new(timeout: Duration) -> Result<BatchClient, ProviderError> {
        let http = crate::wire::http_client(timeout)?;
        Ok(BatchClient { http, timeout, aws: None })
    }

    /// Bedrock batch inference through this client: the credentials, region, bucket and role.
    pub fn with_aws(mut self, aws: BatchAws) -> BatchClient {
        self.aws = Some(aws);
        self
    }

    /// The profile's batch API: the one place a provider's implementation is picked.
    fn format<'a>(&'a self, profile: &'a ModelProfile) -> Box<dyn BatchFormat + 'a> {
        let call = Call { http: &self.http, bedrock: None, profile, timeout: self.timeout, tap: &NoTap };
        match Format::of(profile) {
            Format::OpenAi => Box::new(OpenAiBatches { call }),
            Format::Anthropic => Box::new(AnthropicBatches { call }),
            Format::Bedrock => Box::new(BedrockBatches {
                profile,
                call: self.aws.as_ref().map(|aws| AwsCall {
                    http: &self.http,
                    aws,
                    profile,
                    timeout: self.timeout,
                }),
            }),
        }
    }

    /// Submit a batch, idempotent on `batch_id` where the provider allows it: OpenAI by the
    /// batch's metadata, Bedrock by the job's client request token; Anthropic has no idempotency
    /// key, so the caller looks a lost submit up ([`BatchClient::find`]) before sending it
    /// again. Returns the provider's batch id (a Bedrock job's ARN).
    #[tracing::instrument(skip_all, fields(profile = %profile.id, %batch_id, lines = lines.len()))]
    pub async fn submit(
        &self,
        profile: &ModelProfile,
        batch_id: Uuid,
        lines: &[BatchLine<'_>],
    ) -> Result<String, ProviderError> {
        self.format(profile).submit(batch_id, lines).await
    }

    /// Where the batch is (`batch`: the provider's id of it, as [`BatchClient::submit`] gave it).
    pub async fn status(&self, profile: &ModelProfile, batch: &str) -> Result<BatchPhase, ProviderError> {
        self.format(profile).status(batch).await
    }

    /// The result lines of the tasks in `requests` from `phase_results` (what
    /// [`BatchPhase::Done`] gave), read page by page as the files stream in, in any order,
    /// duplicates passed on. A line over [`MAX_RESULT_LINE_BYTES`] is its task's
    /// [`ProviderError::Malformed`]; a file has no bound of its own (memory is the page's).
    pub fn results<'a>(
        &'a self,
        profile: &'a ModelProfile,
        phase_results: &[String],
        requests: &'a HashMap<Uuid, AiRequest>,
    ) -> ResultReader<'a> {
        ResultReader::new(self.format(profile), profile, self.timeout, phase_results, requests)
    }

    /// Best effort: cancel (stop) a batch nobody waits for any more.
    pub async fn cancel(&self, profile: &ModelProfile, batch: &str) -> Result<(), ProviderError> {
        self.format(profile).cancel(batch).await
    }

    /// The provider's batch (or batches) made before for `batch_id`: a submit's answer may have
    /// been lost (a timeout, a batcher killed before its commit). OpenAI's and Bedrock's are
    /// found by their key; Anthropic's by what was sent ([`Found::Matching`]).
    pub async fn find(
        &self,
        profile: &ModelProfile,
        batch_id: Uuid,
        sent: &Sent,
    ) -> Result<Found, ProviderError> {
        self.format(profile).find(batch_id, sent).await
    }

    /// Delete what the provider holds of a batch we are done with: OpenAI's input, output and
    /// error files; Anthropic's message batch (its requests and results). A batch still running
    /// is canceled first, and deleted on a later call once it has ended. Bedrock's input and
    /// output are S3 objects the bucket's lifecycle rule expires: nothing to do here.
    pub async fn clean_up(&self, profile: &ModelProfile, batch: &str) -> Result<Cleanup, ProviderError> {
        self.format(profile).clean_up(batch).await
    }
}
