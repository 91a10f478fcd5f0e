//! Deferred tasks through the providers' batch APIs: OpenAI's Files and Batches API
//! ([`openai`]), Anthropic's Message Batches ([`anthropic`]) and Amazon Bedrock's batch inference
//! jobs over S3 ([`bedrock`], signed by [`aws`]).
//!
//! A batch line is the request the on-demand call sends (the same body function), keyed by the
//! task id; a result line is read by the same reader and checker as an on-demand answer, its
//! usage priced at the profile's batch prices. An answer that fails the checker comes back as a
//! [`Resume`] for the on-demand repair turn ([`crate::Provider::repair_gated`]).
//!
//! Everything a provider sends is input: result files are read as a stream, a page at a time
//! ([`ResultReader`]), whatever their size, each line to at most [`MAX_RESULT_LINE_BYTES`]; a
//! line naming a task that is not in the batch, or no task at all, is left out (counted in a
//! log line); errors name what the provider wrote by size and hash only, and never carry a key.

mod anthropic;
mod aws;
mod bedrock;
mod left_behind;
mod leftovers;
mod openai;
mod reader;
mod splitter;

use std::collections::HashMap;
use std::time::Duration;

use aitasks_contracts::{answer_schema_for, AiRequest};
use serde_json::Value;
use uuid::Uuid;

pub use aws::BatchAws;
pub use left_behind::{Cleanup, Found, Sent, CLOCK_SKEW};
pub use reader::{ResultReader, PAGE_BYTES, PAGE_LINES};

use crate::client::{checked, reported_usage_bounded, storable, Completion, Resume, Usage};
use crate::error::ProviderError;
use crate::format::Format;
use crate::profiles::ModelProfile;
use crate::tap::NoTap;
use crate::wire::Call;

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
    /// The provider is done with it: `results` are what [`BatchClient::results`] reads (OpenAI's
    /// output and error file ids, Anthropic's `results_url`, Bedrock's S3 output prefix);
    /// `stopped` says why it did not complete (`None` when it completed).
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

    fn call<'a>(&'a self, profile: &'a ModelProfile) -> Call<'a> {
        Call { http: &self.http, bedrock: None, profile, timeout: self.timeout, tap: &NoTap }
    }

    fn aws_call<'a>(&'a self, profile: &'a ModelProfile) -> Result<aws::AwsCall<'a>, ProviderError> {
        let aws = self.aws.as_ref().ok_or_else(|| {
            ProviderError::Connection("no AWS configuration for Bedrock batches (bucket, role)".into())
        })?;
        Ok(aws::AwsCall { http: &self.http, aws, profile, timeout: self.timeout })
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
        match Format::of(profile) {
            Format::OpenAi => openai::submit(&self.call(profile), batch_id, lines).await,
            Format::Anthropic => anthropic::submit(&self.call(profile), lines).await,
            Format::Bedrock => bedrock::submit(&self.aws_call(profile)?, batch_id, lines).await,
        }
    }

    /// Where the batch is.
    pub async fn status(
        &self,
        profile: &ModelProfile,
        provider_batch_id: &str,
    ) -> Result<BatchPhase, ProviderError> {
        match Format::of(profile) {
            Format::OpenAi => openai::status(&self.call(profile), provider_batch_id).await,
            Format::Anthropic => anthropic::status(&self.call(profile), provider_batch_id).await,
            Format::Bedrock => bedrock::status(&self.aws_call(profile)?, provider_batch_id).await,
        }
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
        ResultReader::new(self, profile, phase_results, requests)
    }

    /// Best effort: cancel (stop) a batch nobody waits for any more.
    pub async fn cancel(&self, profile: &ModelProfile, provider_batch_id: &str) -> Result<(), ProviderError> {
        match Format::of(profile) {
            Format::OpenAi => openai::cancel(&self.call(profile), provider_batch_id).await,
            Format::Anthropic => anthropic::cancel(&self.call(profile), provider_batch_id).await,
            Format::Bedrock => bedrock::cancel(&self.aws_call(profile)?, provider_batch_id).await,
        }
    }
}

/// The body of one batch line: the on-demand call's, for its first turn.
fn line_body(profile: &ModelProfile, request: &AiRequest) -> Value {
    let format = Format::of(profile);
    let schema = answer_schema_for(request, profile.schema_dialect());
    format.body(profile, request, &schema, &format.start(request))
}

/// A result line's answer (the body an on-demand call would have had) read and checked.
fn judge(profile: &ModelProfile, request: &AiRequest, answer: &Value) -> LineOutcome {
    let format = Format::of(profile);
    let turn = match format.read(profile, request, answer) {
        Ok(turn) => reported_usage_bounded(turn),
        Err(error) => return LineOutcome::Failed(error),
    };
    let mut usage = Usage::start(profile);
    usage.calls = 1;
    usage.add_turn(&turn);
    usage.estimated_cost_usd = profile.batch_cost(turn.input_tokens, turn.output_tokens);
    match checked(request, &turn) {
        Ok(output) => match storable(output) {
            Ok(output) => LineOutcome::Answered(Completion { output, usage }),
            Err(too_large) => LineOutcome::Failed(too_large),
        },
        Err(problems) => {
            let mut conversation = format.start(request);
            format.repair(&mut conversation, turn, &problems);
            LineOutcome::Invalid(Resume { conversation, problems, usage })
        }
    }
}

/// The task a line names, when it is one of the batch's.
fn known<'r>(id: Option<&str>, requests: &'r HashMap<Uuid, AiRequest>) -> Option<(Uuid, &'r AiRequest)> {
    let task_id = Uuid::parse_str(id?).ok()?;
    requests.get(&task_id).map(|request| (task_id, request))
}

/// A line's outcome for a line that was over [`MAX_RESULT_LINE_BYTES`].
fn too_long() -> LineOutcome {
    LineOutcome::Failed(ProviderError::Malformed(format!(
        "the batch result line is over {MAX_RESULT_LINE_BYTES} bytes; it was not read"
    )))
}

/// An expired or canceled line: answered by nobody.
fn unanswered(why: &str) -> LineOutcome {
    LineOutcome::Unanswered(format!("the batch ended before this task was answered ({why})"))
}

/// A provider's id used in a URL path: a short token only (no `/`, no `..`).
fn path_id<'a>(id: &'a str, what: &str) -> Result<&'a str, ProviderError> {
    if crate::error::is_token(id) {
        Ok(id)
    } else {
        Err(ProviderError::Malformed(format!(
            "the provider's {what} id is not a short token: {}",
            crate::error::said(None, "id", id)
        )))
    }
}
