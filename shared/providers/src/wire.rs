//! What every provider's wire format shares: one call's inputs, one turn's answer, the HTTP
//! status classes, `Retry-After`, the profile's headers, and keeping credentials and what the
//! provider wrote out of errors.

use std::future::Future;
use std::time::Duration;

use aitasks_contracts::AiRequest;
use reqwest::header::HeaderValue;
use serde_json::Value;

use crate::error::{is_token, said, ProviderError};
use crate::profiles::ModelProfile;
use crate::tap::Tap;

/// The parts of one provider call that do not change between turns.
pub(crate) struct Call<'a> {
    pub http: &'a reqwest::Client,
    /// The Bedrock Runtime client, when the worker has AWS configuration.
    pub bedrock: Option<&'a aws_sdk_bedrockruntime::Client>,
    pub profile: &'a ModelProfile,
    pub timeout: Duration,
    /// Told the text of a streamed answer as it arrives.
    pub tap: &'a dyn Tap,
}

impl Call<'_> {
    /// The output-token cap of a call for `request`: the kind's, or the profile's when lower.
    pub(crate) fn token_limit(&self, request: &AiRequest) -> u32 {
        token_limit(self.profile, request)
    }
}

/// The output-token cap of a call of `profile` for `request`.
pub(crate) fn token_limit(profile: &ModelProfile, request: &AiRequest) -> u32 {
    profile.call.token_cap(aitasks_contracts::max_output_tokens(request))
}

/// One turn's parsed answer: the answer object, or why there is none to check.
pub(crate) struct Turn {
    pub answer: Result<Value, String>,
    /// What the model said, as the provider's format replays it in a repair turn.
    pub reply: Value,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model: Option<String>,
}

/// A provider's wire format. The body of a call and the reading of an answer are functions of
/// their own, so that a batch line is the same request the on-demand call sends and a batch
/// result is read as an on-demand answer is (the batch results, `batches`).
pub(crate) trait Wire: Sync {
    /// The conversation's first messages.
    fn start(&self, request: &AiRequest) -> Vec<Value>;
    /// The JSON body of one call.
    fn body(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Value;
    /// A 2xx answer read: an answer that says it refused or was cut off is an error, not a turn.
    fn read(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        answer: &Value,
    ) -> Result<Turn, ProviderError>;
    /// One call: [`Wire::body`] sent, its answer through [`Wire::read`].
    fn turn(
        &self,
        call: &Call<'_>,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> impl Future<Output = Result<Turn, ProviderError>> + Send;
    /// Append the model's reply and the checker's problems for the next turn.
    fn repair(&self, conversation: &mut Vec<Value>, turn: Turn, problems: &str);
}

/// The HTTP client of every provider call, on-demand and batch. It follows no redirect: a 3xx
/// is the call's answer ([`status_error`]). reqwest's default policy follows one to another
/// host and drops only `Authorization` there, so `x-api-key` and every `secretHeaders` value
/// would go wherever a provider's (or a hijacked base URL's) `Location` pointed.
pub(crate) fn http_client(timeout: Duration) -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .pool_idle_timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| ProviderError::Connection(format!("cannot build the HTTP client: {e}")))
}

/// Send a request and read its JSON body: [`fetch`] with the on-demand bound.
pub(crate) async fn send(call: &Call<'_>, request: reqwest::RequestBuilder) -> Result<Value, ProviderError> {
    let text = fetch(call, request, MAX_RESPONSE_BYTES).await?;
    serde_json::from_str(&text).map_err(|_| {
        let text = scrub_secret(text.clone(), call.profile);
        tracing::debug!(body = %snippet(&text), "the provider's answer is not JSON");
        ProviderError::Malformed(format!("not JSON: {}", said(None, "body", &text)))
    })
}

/// Send a request with the profile's headers and read at most `limit` bytes of its body: the
/// shared HTTP error classes, with `overloaded` statuses (Anthropic's 529) among the 5xx. An
/// error names the body by the provider's error code and the body's size and hash ([`said`]);
/// the body itself goes to a DEBUG line.
pub(crate) async fn fetch(
    call: &Call<'_>,
    request: reqwest::RequestBuilder,
    limit: usize,
) -> Result<String, ProviderError> {
    let response = sent(call, request).await?;
    read_bounded(response, limit, call.timeout, call.profile).await
}

/// Send a request with the profile's headers and the call's timeout, which bounds the whole
/// exchange (the body too, however it is read): a 2xx response, or the error its answer is.
pub(crate) async fn sent(
    call: &Call<'_>,
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, ProviderError> {
    let request = with_profile_headers(call, request.timeout(call.timeout));
    let response = request.send().await.map_err(|e| transport_error(e, call.timeout, call.profile))?;
    if response.status().is_success() {
        return Ok(response);
    }
    Err(error_answer(call, response).await)
}

/// A non-2xx answer read (bounded) and classed.
async fn error_answer(call: &Call<'_>, response: reqwest::Response) -> ProviderError {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let text = match read_bounded(response, MAX_RESPONSE_BYTES, call.timeout, call.profile).await {
        Ok(text) => text,
        Err(error) => return error,
    };
    let text = scrub_secret(text, call.profile);
    tracing::debug!(status = status.as_u16(), body = %snippet(&text), "the provider's error answer");
    let code = error_code(&text);
    status_error(status.as_u16(), retry_after, code.as_deref(), &text, &call.profile.model)
}

/// The profile's headers, its secret ones marked sensitive.
fn with_profile_headers(call: &Call<'_>, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    for (name, value) in &call.profile.call.headers {
        request = request.header(name, value);
    }
    for header in &call.profile.secret_headers {
        // Checked when the profile was read; marked sensitive, so no Debug of the request shows it.
        if let Some(Ok(mut value)) = header.value.as_ref().map(|v| HeaderValue::from_str(v.expose())) {
            value.set_sensitive(true);
            request = request.header(&header.name, value);
        }
    }
    request
}

/// Send a request as [`fetch`] does, but hand back a 2xx response for its body to be read as
/// it arrives (a batch's result file, of any size): the call's timeout bounds the sending and
/// the answer's head, not the body, whose reader bounds each chunk ([`next_chunk`]). An error
/// answer is read (bounded) and classed as [`fetch`]'s.
pub(crate) async fn open(
    call: &Call<'_>,
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, ProviderError> {
    let request = with_profile_headers(call, request);
    let sent = tokio::time::timeout(call.timeout, request.send()).await;
    let response = match sent {
        Ok(sent) => sent.map_err(|e| transport_error(e, call.timeout, call.profile))?,
        Err(_) => return Err(ProviderError::Timeout(call.timeout)),
    };
    if response.status().is_success() {
        return Ok(response);
    }
    Err(error_answer(call, response).await)
}

/// The next chunk of a body being streamed, each within `timeout`; `None` at its end.
pub(crate) async fn next_chunk(
    response: &mut reqwest::Response,
    timeout: Duration,
    profile: &ModelProfile,
) -> Result<Option<impl AsRef<[u8]>>, ProviderError> {
    match tokio::time::timeout(timeout, response.chunk()).await {
        Ok(chunk) => chunk.map_err(|e| transport_error(e, timeout, profile)),
        Err(_) => Err(ProviderError::Timeout(timeout)),
    }
}

/// An HTTP error status in our classes; `code` is the provider's error code, `text` what it
/// wrote (scrubbed), named by size and hash only.
pub(crate) fn status_error(
    status: u16,
    retry_after: Option<Duration>,
    code: Option<&str>,
    text: &str,
    model: &str,
) -> ProviderError {
    let message = said(code, "body", text);
    match status {
        429 => ProviderError::RateLimited { retry_after, message },
        401 | 403 => ProviderError::Auth { status },
        404 => ProviderError::ModelUnknown(format!("{model} ({message})")),
        408 => ProviderError::Server { status: 408, message },
        code if code >= 500 => ProviderError::Server { status: code, message },
        // Not followed (`http_client`): the profile's base URL must be the provider's own.
        code @ 300..=399 => {
            ProviderError::Rejected { status: code, message: format!("a redirect, not followed; {message}") }
        }
        code => ProviderError::Rejected { status: code, message },
    }
}

/// The most of a provider's response body that is read: a longer one is malformed (an answer
/// is held to far less, contracts' answer budgets), and what a provider sends is input, never
/// read without a bound into a function's memory.
pub(crate) const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// At most `limit` bytes of a response body, or [`ProviderError::Malformed`].
pub(crate) async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
    timeout: Duration,
    profile: &ModelProfile,
) -> Result<String, ProviderError> {
    let too_long = || {
        ProviderError::Malformed(format!("the response body is over {limit} bytes; the rest was not read"))
    };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_long());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(e, timeout, profile))? {
        if body.len() + chunk.len() > limit {
            return Err(too_long());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A 2xx body without the part the format promises.
pub(crate) fn malformed(profile: &ModelProfile, what: &str, body: &Value) -> ProviderError {
    let text = scrub_secret(body.to_string(), profile);
    tracing::debug!(body = %snippet(&text), "the provider's answer has no {what}");
    ProviderError::Malformed(format!("no {what} in the answer: {}", said(None, "body", &text)))
}

/// The answer text of a turn, parsed: a JSON object to check, or why not.
pub(crate) fn parse_answer(text: Option<&str>) -> Result<Value, String> {
    match text.map(serde_json::from_str::<Value>) {
        Some(Ok(answer)) => Ok(answer),
        Some(Err(e)) => Err(format!("the answer is not valid JSON ({e})")),
        None => Err("the answer was empty".to_owned()),
    }
}

pub(crate) fn transport_error(
    error: reqwest::Error,
    timeout: Duration,
    profile: &ModelProfile,
) -> ProviderError {
    if error.is_timeout() {
        ProviderError::Timeout(timeout)
    } else if error.is_connect() || error.is_request() {
        // reqwest errors name the URL, never the headers; scrub anyway.
        ProviderError::Connection(scrub_secret(error.to_string(), profile))
    } else {
        ProviderError::Malformed(scrub_secret(error.to_string(), profile))
    }
}

/// The provider's error code in an error body, when it gave one: OpenAI's `error.code` or
/// `error.type`, Anthropic's `error.type`, a top-level `code` or `type` (vLLM and others).
pub(crate) fn error_code(text: &str) -> Option<String> {
    let body: Value = serde_json::from_str(text).ok()?;
    ["/error/code", "/error/type", "/code", "/type"]
        .iter()
        .filter_map(|pointer| body.pointer(pointer).and_then(Value::as_str))
        .find(|code| is_token(code) && *code != "error")
        .map(str::to_owned)
}

/// At most 300 characters of a provider's body, for DEBUG lines.
pub(crate) fn snippet(text: &str) -> String {
    let mut out: String = text.chars().take(300).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Providers sometimes echo the credentials they were given (the key, a secret header's
/// value); never pass them on.
pub(crate) fn scrub_secret(text: String, profile: &ModelProfile) -> String {
    let secrets =
        profile.api_key.iter().chain(profile.secret_headers.iter().filter_map(|h| h.value.as_ref()));
    secrets
        .map(|secret| secret.expose())
        .filter(|secret| !secret.is_empty())
        .fold(text, |text, secret| text.replace(secret, "***"))
}

/// `Retry-After`: whole seconds, or an HTTP date.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
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
    use serde_json::json;

    #[test]
    fn an_error_body_s_code_is_found_in_each_provider_s_shape() {
        let code = |body: Value| error_code(&body.to_string());
        assert_eq!(
            code(
                json!({"error": {"message": "m", "type": "invalid_request_error", "code": "context_length_exceeded"}})
            ),
            Some("context_length_exceeded".to_owned())
        );
        assert_eq!(
            code(json!({"error": {"message": "m", "type": "requests", "code": null}})),
            Some("requests".to_owned())
        );
        assert_eq!(
            code(json!({"type": "error", "error": {"type": "overloaded_error", "message": "m"}})),
            Some("overloaded_error".to_owned())
        );
        assert_eq!(
            code(json!({"object": "error", "type": "BadRequestError", "code": 400})),
            Some("BadRequestError".to_owned())
        );
        assert_eq!(code(json!({"error": {"code": "the prompt says hello"}})), None, "not a token");
        assert_eq!(error_code("<html>busy</html>"), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }
}
