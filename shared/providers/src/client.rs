//! The provider client: one attempt of a task against the profile's provider, with the
//! structured-output repair turns. Each provider's wire format is its own module
//! ([`crate::openai`], [`crate::anthropic`], [`crate::bedrock`]); the loop around them is here,
//! and the repair turn that continues a batch line's invalid answer ([`Provider::repair_gated`]).

use std::future::Future;
use std::time::{Duration, Instant};

use aitasks_contracts::{answer_schema_for, check_answer, AiRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{said, ProviderError};
use crate::format::Format;
use crate::gate::{CallEstimate, CallGate, NoLimits};
use crate::profiles::ModelProfile;
use crate::tap::{NoTap, Tap};
use crate::wire::{Call, Turn, Wire};

/// Repair turns per attempt: when an answer fails the checker the model is asked again with
/// the problems stated, at most this many times.
pub const MAX_REPAIR_TURNS: u32 = 2;

/// What a provider returns for a task: the checked output and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub output: Value,
    pub usage: Usage,
}

/// Tokens and time spent on one attempt (all of its turns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model: String,
    pub latency_ms: u64,
    /// Provider calls made, repair turns included.
    pub calls: u32,
    /// The profile that answered: the task's own, or one of its fallbacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// What the calls cost in US dollars at the profile's list prices (a batch line's at its
    /// batch prices), when the profile has prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cost_usd: Option<f64>,
}

impl Usage {
    fn add_cost(&mut self, cost: Option<f64>) {
        if let Some(cost) = cost {
            self.estimated_cost_usd = Some(self.estimated_cost_usd.unwrap_or(0.0) + cost);
        }
    }
}

/// Where the on-demand repair turn of a batch line's invalid answer starts: the conversation
/// with the model's reply and the checker's problems already in it (in the profile's wire
/// format), the problems, and what the batch line cost. The store keeps it as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resume {
    pub conversation: Vec<Value>,
    pub problems: String,
    pub usage: Usage,
}

/// Something that turns an [`AiRequest`] into a checked output.
pub trait Provider: Send + Sync {
    /// Run one attempt, asking `gate` before each call (repair turns included) and telling
    /// `tap` each call's text as it streams. Resolves promptly with [`ProviderError::Canceled`]
    /// once `cancel` fires, and with [`ProviderError::AtLimit`] when the gate refuses the first
    /// call (none was made).
    fn run_gated(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        gate: &dyn CallGate,
        tap: &dyn Tap,
        cancel: &CancellationToken,
    ) -> impl Future<Output = Result<Completion, ProviderError>> + Send;

    /// One call continuing `resume` (a batch line whose answer failed the checker): the repair
    /// turn, its answer checked, no further repair turn (invalid again:
    /// [`ProviderError::LoopFailed`]). The usage adds `resume.usage`. A provider without a
    /// repair turn of its own runs the attempt afresh.
    fn repair_gated(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        resume: &Resume,
        gate: &dyn CallGate,
        tap: &dyn Tap,
        cancel: &CancellationToken,
    ) -> impl Future<Output = Result<Completion, ProviderError>> + Send {
        let _ = resume;
        self.run_gated(profile, request, gate, tap, cancel)
    }

    /// Run one attempt with no provider-side limits.
    fn run(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        cancel: &CancellationToken,
    ) -> impl Future<Output = Result<Completion, ProviderError>> + Send {
        self.run_gated(profile, request, &NoLimits, &NoTap, cancel)
    }
}

/// The providers: OpenAI-compatible chat completions (`"provider": "openai"`), Anthropic's
/// Messages API (`"anthropic"`) and Amazon Bedrock's Converse API (`"bedrock"`), chosen by the
/// profile.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    http: reqwest::Client,
    timeout: Duration,
    bedrock: Option<aws_sdk_bedrockruntime::Client>,
}

impl HttpProvider {
    /// A client whose calls give up after `timeout` (a profile's `timeoutMs` overrides it).
    pub fn new(timeout: Duration) -> Result<HttpProvider, ProviderError> {
        let http = crate::wire::http_client(timeout)?;
        Ok(HttpProvider { http, timeout, bedrock: None })
    }

    /// Call Amazon Bedrock through this client (`"provider": "bedrock"`). Build it with the SDK's
    /// retries off: a retry is an attempt of ours, counted on the task.
    pub fn with_bedrock(mut self, client: aws_sdk_bedrockruntime::Client) -> HttpProvider {
        self.bedrock = Some(client);
        self
    }
}

impl Provider for HttpProvider {
    async fn run_gated(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        gate: &dyn CallGate,
        tap: &dyn Tap,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let call = Call {
            http: &self.http,
            bedrock: self.bedrock.as_ref(),
            profile,
            timeout: profile.timeout.unwrap_or(self.timeout),
            tap,
        };
        let start = Start {
            conversation: Format::of(profile).start(request),
            usage: Usage::start(profile),
            calls: MAX_REPAIR_TURNS + 1,
        };
        self.turns(&call, request, gate, cancel, start).await
    }

    async fn repair_gated(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        resume: &Resume,
        gate: &dyn CallGate,
        tap: &dyn Tap,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let call = Call {
            http: &self.http,
            bedrock: self.bedrock.as_ref(),
            profile,
            timeout: profile.timeout.unwrap_or(self.timeout),
            tap,
        };
        let mut usage = resume.usage.clone();
        usage.profile = Some(profile.id.clone());
        let start = Start { conversation: resume.conversation.clone(), usage, calls: 1 };
        self.turns(&call, request, gate, cancel, start).await
    }
}

impl HttpProvider {
    async fn turns(
        &self,
        call: &Call<'_>,
        request: &AiRequest,
        gate: &dyn CallGate,
        cancel: &CancellationToken,
        start: Start,
    ) -> Result<Completion, ProviderError> {
        let turns = async {
            match Format::of(call.profile) {
                Format::Anthropic => {
                    run_turns(&crate::anthropic::Anthropic, call, request, gate, start).await
                }
                Format::Bedrock => run_turns(&crate::bedrock::Bedrock, call, request, gate, start).await,
                Format::OpenAi => run_turns(&crate::openai::OpenAi, call, request, gate, start).await,
            }
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(ProviderError::Canceled),
            result = turns => result,
        }
    }
}

impl Usage {
    /// Nothing used yet, by `profile`.
    pub(crate) fn start(profile: &ModelProfile) -> Usage {
        Usage {
            input_tokens: 0,
            output_tokens: 0,
            model: profile.model.clone(),
            latency_ms: 0,
            calls: 0,
            profile: Some(profile.id.clone()),
            estimated_cost_usd: None,
        }
    }

    /// One turn's tokens and model added.
    pub(crate) fn add_turn(&mut self, turn: &Turn) {
        self.input_tokens = self.input_tokens.saturating_add(turn.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(turn.output_tokens);
        if let Some(model) = &turn.model {
            self.model = reported_model(model);
        }
    }
}

/// Where a run of turns starts: its conversation, what was used before it, and how many calls
/// it may make.
struct Start {
    conversation: Vec<Value>,
    usage: Usage,
    calls: u32,
}

/// A turn's answer through the contract checker: the output, or the problems to state.
pub(crate) fn checked(request: &AiRequest, turn: &Turn) -> Result<Value, String> {
    match &turn.answer {
        Ok(answer) => check_answer(request, answer).map_err(|problems| problems.to_string()),
        Err(problem) => Err(problem.clone()),
    }
}

/// A checked output a task can store: within [`aitasks_contracts::OUTPUT_MAX_BYTES`], so every
/// answer that carries it stays under Lambda's 6 MB. Bounded here, where every stored output is
/// made (an on-demand turn, a batch line), so that an oversized one fails its own task only.
pub(crate) fn storable(output: Value) -> Result<Value, ProviderError> {
    match aitasks_contracts::oversized_output(&output) {
        Some(bytes) => Err(ProviderError::OutputTooLarge { bytes }),
        None => Ok(output),
    }
}

/// An upper bound on a call's input tokens: every token is at least one byte of what is sent
/// (the conversation, the answer schema, the system prompt), plus a little for the framing a
/// provider adds to each message.
fn input_bound(request: &AiRequest, schema: &Value, conversation: &[Value]) -> u64 {
    const FRAMING: usize = 64;
    let bytes = |value: &Value| serde_json::to_string(value).map_or(0, |text| text.len());
    let sent = conversation.iter().map(bytes).sum::<usize>()
        + bytes(schema)
        + aitasks_contracts::system_prompt(request).len();
    u64::try_from(sent + FRAMING * (conversation.len() + 1)).unwrap_or(u64::MAX)
}

/// The model name a provider reports, as the task's usage stores it: a provider's answer is
/// input like any other, so control characters (a NUL, which Postgres cannot store) go and the
/// name is cut to a sensible length.
fn reported_model(name: &str) -> String {
    const MODEL_NAME_MAX_CHARS: usize = 200;
    name.chars().filter(|c| !c.is_control()).take(MODEL_NAME_MAX_CHARS).collect()
}

/// Ask, check the answer, and ask again with the problems stated, up to `start.calls` calls in
/// all ([`MAX_REPAIR_TURNS`] repair turns for an attempt, one for a batch line's repair).
async fn run_turns<W: Wire>(
    wire: &W,
    call: &Call<'_>,
    request: &AiRequest,
    gate: &dyn CallGate,
    start: Start,
) -> Result<Completion, ProviderError> {
    let schema = answer_schema_for(request, call.profile.schema_dialect());
    let Start { mut conversation, mut usage, calls } = start;
    let mut made = 0;
    // What the repair turns waited for the limits, in all.
    let mut waited = Duration::ZERO;
    loop {
        let estimate = CallEstimate {
            input_tokens: input_bound(request, &schema, &conversation),
            output_tokens: u64::from(call.token_limit(request)),
        };
        let passed = loop {
            match gate.pass(estimate).await {
                Ok(passed) => break passed,
                // No call made yet: the attempt ends unworked, for the worker to pass over.
                Err(wait) if made == 0 => return Err(ProviderError::AtLimit { wait }),
                // A repair turn of an attempt under way waits for the limit to let it through,
                // up to a bound the concurrency slot's lease allows for (worker permit.rs); then
                // the attempt ends as rate limited, counted.
                Err(wait) if waited + wait <= MAX_REPAIR_GATE_WAIT => {
                    waited += wait;
                    tokio::time::sleep(wait).await;
                }
                Err(wait) => {
                    return Err(ProviderError::RateLimited {
                        retry_after: Some(wait),
                        message: "a repair turn waited too long for the profile's limits".to_owned(),
                    })
                }
            }
        };
        let started = Instant::now();
        call.tap.begin();
        let turn = wire.turn(call, request, &schema, &conversation).await;
        call.tap.end();
        usage.latency_ms += u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        usage.calls += 1;
        made += 1;
        let turn = turn.map(reported_usage_bounded);
        // A call that sent a prompt and got an answer used tokens: a count of 0 is a provider
        // (or a proxy) that did not say, and the reservation stays counted.
        let used = turn.as_ref().ok().map(|t| t.input_tokens + t.output_tokens).filter(|&n| n > 0);
        gate.reconcile_tokens(passed, used).await;
        let turn: Turn = turn?;
        usage.add_turn(&turn);
        usage.add_cost(call.profile.cost(turn.input_tokens, turn.output_tokens));
        let problems = match checked(request, &turn) {
            Ok(output) => return storable(output).map(|output| Completion { output, usage }),
            Err(problems) => problems,
        };
        tracing::debug!(calls = usage.calls, %problems, "answer failed the checker");
        if made >= calls {
            // The problems may quote the answer, and the answer the prompt.
            return Err(ProviderError::LoopFailed(said(None, "problems", &problems)));
        }
        wire.repair(&mut conversation, turn, &problems);
    }
}

/// The most tokens one turn is taken to have used, in each direction. A provider's usage report
/// is input: a count of 2^64 - 1 must not overflow the attempt's sum, a tenant's statistics
/// (bigint) or a profile's minute, and no model reads or writes a billion tokens in one call.
/// The longest a repair turn waits for its profile's limits in total: the rest of a minute and
/// its jitter, once. A concurrency slot is held long enough for this wait on each repair turn.
pub const MAX_REPAIR_GATE_WAIT: Duration = Duration::from_secs(62);

const MAX_TURN_TOKENS: u64 = 1_000_000_000;

pub(crate) fn reported_usage_bounded(mut turn: Turn) -> Turn {
    turn.input_tokens = turn.input_tokens.min(MAX_TURN_TOKENS);
    turn.output_tokens = turn.output_tokens.min(MAX_TURN_TOKENS);
    turn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_model_name_is_stored_without_control_characters_and_bounded() {
        assert_eq!(reported_model("gpt-4o\u{0}-mini\n"), "gpt-4o-mini");
        assert_eq!(reported_model(&"m".repeat(1000)).chars().count(), 200);
    }
}
