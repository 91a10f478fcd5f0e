//! An OpenAI-compatible chat-completions client with structured outputs.

use std::future::Future;
use std::time::{Duration, Instant};

use aitasks_contracts::{
    answer_schema_for, check_answer, max_output_tokens, schema_name, system_prompt, user_message, AiRequest,
};
use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::profiles::ModelProfile;

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
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model: String,
    pub latency_ms: u64,
    /// Provider calls made, repair turns included.
    pub calls: u32,
}

/// Something that turns an [`AiRequest`] into a checked output.
pub trait Provider: Send + Sync {
    /// Run one attempt. Resolves promptly with [`ProviderError::Canceled`] once `cancel` fires.
    fn run(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        cancel: &CancellationToken,
    ) -> impl Future<Output = Result<Completion, ProviderError>> + Send;
}

/// The OpenAI-compatible client: `POST {baseUrl}/chat/completions`.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    timeout: Duration,
}

impl OpenAiClient {
    /// A client whose every call gives up after `timeout`.
    pub fn new(timeout: Duration) -> Result<OpenAiClient, ProviderError> {
        let http = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| ProviderError::Connection(format!("cannot build the HTTP client: {e}")))?;
        Ok(OpenAiClient { http, timeout })
    }
}

impl Provider for OpenAiClient {
    async fn run(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(ProviderError::Canceled),
            result = self.run_turns(profile, request) => result,
        }
    }
}

/// One chat turn's parsed answer.
struct Turn {
    content: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    model: Option<String>,
}

impl OpenAiClient {
    async fn run_turns(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
    ) -> Result<Completion, ProviderError> {
        let schema = answer_schema_for(request, profile.schema_dialect());
        let mut messages = vec![
            json!({"role": "system", "content": system_prompt(request)}),
            json!({"role": "user", "content": user_message(request)}),
        ];
        let mut usage = Usage {
            input_tokens: 0,
            output_tokens: 0,
            model: profile.model.clone(),
            latency_ms: 0,
            calls: 0,
        };
        loop {
            let started = Instant::now();
            let turn = self.call(profile, request, &schema, &messages).await;
            usage.latency_ms += u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            usage.calls += 1;
            let turn = turn?;
            usage.input_tokens += turn.input_tokens;
            usage.output_tokens += turn.output_tokens;
            if let Some(model) = turn.model {
                usage.model = model;
            }
            let problems = match turn.content.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(answer)) => match check_answer(request, &answer) {
                    Ok(output) => return Ok(Completion { output, usage }),
                    Err(problems) => problems.to_string(),
                },
                Some(Err(e)) => format!("the answer is not valid JSON ({e})"),
                None => "the answer was empty".to_owned(),
            };
            tracing::debug!(calls = usage.calls, %problems, "answer failed the checker");
            if usage.calls > MAX_REPAIR_TURNS {
                return Err(ProviderError::LoopFailed(problems));
            }
            messages.push(json!({"role": "assistant", "content": turn.content.unwrap_or_default()}));
            messages.push(json!({
                "role": "user",
                "content": format!(
                    "That answer was not valid: {problems}. Answer again with only a JSON object that matches the schema."
                ),
            }));
        }
    }

    async fn call(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        schema: &Value,
        messages: &[Value],
    ) -> Result<Turn, ProviderError> {
        let body = json!({
            "model": profile.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_output_tokens(request),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name(request), "strict": true, "schema": schema},
            },
        });
        let mut call = self
            .http
            .post(format!("{}/chat/completions", profile.base_url))
            .timeout(self.timeout)
            .json(&body);
        if let Some(key) = &profile.api_key {
            call = call.bearer_auth(key.expose());
        }
        let scrub = |text: String| scrub_secret(text, profile);
        let response = call.send().await.map_err(|e| self.transport_error(e, profile))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = response.text().await.map_err(|e| self.transport_error(e, profile))?;
        if !status.is_success() {
            let message = scrub(snippet(&text));
            return Err(match status.as_u16() {
                429 => ProviderError::RateLimited { retry_after, message },
                401 | 403 => ProviderError::Auth { status: status.as_u16() },
                404 => ProviderError::ModelUnknown(format!("{} ({message})", profile.model)),
                408 => ProviderError::Server { status: 408, message },
                code if status.is_server_error() => ProviderError::Server { status: code, message },
                code => ProviderError::Rejected { status: code, message },
            });
        }
        let body: Value = serde_json::from_str(&text)
            .map_err(|_| ProviderError::Malformed(scrub(format!("not JSON: {}", snippet(&text)))))?;
        let message = body.pointer("/choices/0/message").ok_or_else(|| {
            ProviderError::Malformed(scrub(format!("no choices[0].message in {}", snippet(&text))))
        })?;
        Ok(Turn {
            content: message.get("content").and_then(Value::as_str).map(str::to_owned),
            input_tokens: body.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: body.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0),
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        })
    }

    fn transport_error(&self, error: reqwest::Error, profile: &ModelProfile) -> ProviderError {
        if error.is_timeout() {
            ProviderError::Timeout(self.timeout)
        } else if error.is_connect() || error.is_request() {
            // reqwest errors name the URL, never the headers; scrub anyway.
            ProviderError::Connection(scrub_secret(error.to_string(), profile))
        } else {
            ProviderError::Malformed(scrub_secret(error.to_string(), profile))
        }
    }
}

/// At most 300 characters of a provider's body, for error messages.
fn snippet(text: &str) -> String {
    let mut out: String = text.chars().take(300).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Providers sometimes echo the key they were given; never pass it on.
fn scrub_secret(text: String, profile: &ModelProfile) -> String {
    match &profile.api_key {
        Some(key) if !key.expose().is_empty() => text.replace(key.expose(), "***"),
        _ => text,
    }
}

/// `Retry-After`: whole seconds, or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(seconds) = value.trim().parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }
}
