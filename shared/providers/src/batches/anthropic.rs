//! Anthropic's Message Batches: `POST {base}/messages/batches` with the requests
//! (`[{custom_id, params}]`, each `params` the on-demand Messages body), the status
//! (`processing_status`: `in_progress`, `canceling`, `ended`), the results from its
//! `results_url` (JSONL, `{"custom_id", "result": {"type": "succeeded" | "errored" |
//! "expired" | "canceled", ...}}`) and `POST .../cancel`. There is no idempotency key: a
//! submit retried after a lost answer makes a second batch (the store's fencing keeps the
//! first answer of each task).

use aitasks_contracts::AiRequest;
use serde_json::{json, Value};

use super::{judge, line_body, path_id, unanswered, BatchLine, BatchPhase, LineOutcome};
use crate::anthropic::ANTHROPIC_VERSION;
use crate::error::{is_token, said, ProviderError};
use crate::wire::{malformed, open as open_stream, scrub_secret, send, Call};

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    let request = request.header("anthropic-version", ANTHROPIC_VERSION);
    match &call.profile.api_key {
        Some(key) => request.header("x-api-key", key.expose()),
        None => request,
    }
}

pub(super) async fn submit(call: &Call<'_>, lines: &[BatchLine<'_>]) -> Result<String, ProviderError> {
    let requests: Vec<Value> = lines
        .iter()
        .map(|line| json!({"custom_id": line.task_id.to_string(), "params": line_body(call.profile, line.request)}))
        .collect();
    let create = call
        .http
        .post(format!("{}/messages/batches", call.profile.base_url))
        .json(&json!({"requests": requests}));
    let batch = send(call, authorized(call, create)).await?;
    batch["id"].as_str().map(str::to_owned).ok_or_else(|| malformed(call.profile, "batch id", &batch))
}

pub(super) async fn status(call: &Call<'_>, batch: &str) -> Result<BatchPhase, ProviderError> {
    let url = format!("{}/messages/batches/{}", call.profile.base_url, path_id(batch, "batch")?);
    let batch = send(call, authorized(call, call.http.get(url))).await?;
    match batch["processing_status"].as_str() {
        Some("in_progress" | "canceling") => Ok(BatchPhase::Working),
        Some("ended") => {
            let results = batch["results_url"].as_str().map(str::to_owned).into_iter().collect();
            let canceled = batch["cancel_initiated_at"].is_string();
            Ok(BatchPhase::Done { results, stopped: canceled.then(|| "canceled".to_owned()) })
        }
        _ => Err(malformed(call.profile, "processing_status", &batch)),
    }
}

/// The batch's results, their body to be read as it arrives.
pub(super) async fn open(call: &Call<'_>, results_url: &str) -> Result<reqwest::Response, ProviderError> {
    // The URL is the provider's word, and the key goes with it: only to the profile's own API.
    let own = format!("{}/", call.profile.base_url);
    if !results_url.starts_with(&own) || results_url.contains("..") {
        return Err(ProviderError::Malformed(format!(
            "the batch's results_url is not under the profile's base URL: {}",
            said(None, "url", results_url)
        )));
    }
    open_stream(call, authorized(call, call.http.get(results_url))).await
}

pub(super) fn outcome(call: &Call<'_>, line: &Value, request: &AiRequest) -> LineOutcome {
    let result = &line["result"];
    match result["type"].as_str() {
        Some("succeeded") => judge(call.profile, request, &result["message"]),
        Some("expired") => unanswered("expired"),
        Some("canceled") => unanswered("canceled"),
        Some("errored") => {
            let error = &result["error"];
            // `{"type": "error", "error": {"type": "...", "message"}}`, or the inner object alone.
            let kind = error.pointer("/error/type").or_else(|| error.get("type")).and_then(Value::as_str);
            let text = scrub_secret(error.to_string(), call.profile);
            let message = said(kind.filter(|kind| is_token(kind)), "error", &text);
            LineOutcome::Failed(match kind {
                Some("invalid_request_error") => ProviderError::Rejected { status: 400, message },
                Some("authentication_error") => ProviderError::Auth { status: 401 },
                Some("permission_error") => ProviderError::Auth { status: 403 },
                Some("not_found_error") => {
                    ProviderError::ModelUnknown(format!("{} ({message})", call.profile.model))
                }
                Some("request_too_large") => ProviderError::Rejected { status: 413, message },
                Some("rate_limit_error") => ProviderError::RateLimited { retry_after: None, message },
                Some("overloaded_error") => ProviderError::Server { status: 529, message },
                _ => ProviderError::Server { status: 500, message },
            })
        }
        _ => LineOutcome::Failed(malformed(call.profile, "result.type", line)),
    }
}

pub(super) async fn cancel(call: &Call<'_>, batch: &str) -> Result<(), ProviderError> {
    let url = format!("{}/messages/batches/{}/cancel", call.profile.base_url, path_id(batch, "batch")?);
    send(call, authorized(call, call.http.post(url))).await.map(drop)
}
