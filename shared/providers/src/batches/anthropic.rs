//! Anthropic's Message Batches: `POST {base}/messages/batches` with the requests
//! (`[{custom_id, params}]`, each `params` the on-demand Messages body), the status
//! (`processing_status`: `in_progress`, `canceling`, `ended`), the results from its
//! `results_url` (JSONL, `{"custom_id", "result": {"type": "succeeded" | "errored" |
//! "expired" | "canceled", ...}}`), `POST .../cancel` and `DELETE` once ended. There is no
//! idempotency key: a submit whose answer was lost is looked for in the list of batches
//! (`GET {base}/messages/batches`, newest first) before it is sent again ([`matching`]).

use aitasks_contracts::AiRequest;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use uuid::Uuid;

use super::format::BatchFormat;
use super::judge::{judge, line_body, path_id, unanswered};
use super::left_behind::{gone, Cleanup, Found, Sent, CLOCK_SKEW};
use super::line::{BatchLine, BatchPhase, LineOutcome};
use crate::anthropic::ANTHROPIC_VERSION;
use crate::error::{is_token, said, ProviderError};
use crate::wire::{malformed, open as open_stream, scrub_secret, send, Call};

/// Anthropic's Message Batches.
pub(super) struct AnthropicBatches<'a> {
    pub(super) call: Call<'a>,
}

#[async_trait]
impl BatchFormat for AnthropicBatches<'_> {
    /// No idempotency key: the caller looks a lost submit up ([`BatchFormat::find`]) before
    /// sending it again.
    async fn submit(&self, _batch_id: Uuid, lines: &[BatchLine<'_>]) -> Result<String, ProviderError> {
        let call = &self.call;
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

    async fn status(&self, batch: &str) -> Result<BatchPhase, ProviderError> {
        let call = &self.call;
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

    async fn cancel(&self, batch: &str) -> Result<(), ProviderError> {
        let call = &self.call;
        let url = format!("{}/messages/batches/{}/cancel", call.profile.base_url, path_id(batch, "batch")?);
        send(call, authorized(call, call.http.post(url))).await.map(drop)
    }

    /// The batches that match what was sent ([`matching`]): no key to find one by.
    async fn find(&self, _batch_id: Uuid, sent: &Sent) -> Result<Found, ProviderError> {
        let found = matching(&self.call, sent).await?;
        Ok(if found.is_empty() { Found::Nothing } else { Found::Matching(found) })
    }

    /// Delete the message batch once it has ended (its requests and results go with it); a batch
    /// still in progress is canceled first.
    async fn clean_up(&self, batch: &str) -> Result<Cleanup, ProviderError> {
        let call = &self.call;
        let url = format!("{}/messages/batches/{}", call.profile.base_url, path_id(batch, "batch")?);
        let state = match send(call, authorized(call, call.http.get(&url))).await {
            Ok(state) => state,
            Err(error) if gone(&error) => return Ok(Cleanup::Done),
            Err(error) => return Err(error),
        };
        match state["processing_status"].as_str() {
            Some("ended") => {}
            Some("in_progress") => {
                self.cancel(batch).await?;
                return Ok(Cleanup::NotYet);
            }
            Some("canceling") => return Ok(Cleanup::NotYet),
            _ => return Err(malformed(call.profile, "processing_status", &state)),
        }
        match send(call, authorized(call, call.http.delete(&url))).await {
            Ok(_) => Ok(Cleanup::Done),
            Err(error) if gone(&error) => Ok(Cleanup::Done),
            Err(error) => Err(error),
        }
    }

    /// The batch's results, their body to be read as it arrives.
    async fn open(&self, results_url: &str) -> Result<reqwest::Response, ProviderError> {
        let call = &self.call;
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

    fn id_field(&self) -> &'static str {
        "custom_id"
    }

    fn outcome(&self, line: &Value, request: &AiRequest) -> LineOutcome {
        let call = &self.call;
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
}

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    let request = request.header("anthropic-version", ANTHROPIC_VERSION);
    match &call.profile.api_key {
        Some(key) => request.header("x-api-key", key.expose()),
        None => request,
    }
}

/// How many pages of [`LIST_PAGE`] batches a lookup reads at most (newest first, so it stops at
/// the first batch older than what it looks for).
const LIST_PAGES: usize = 10;
const LIST_PAGE: &str = "100";

/// The batches made since `sent.since` (less [`CLOCK_SKEW`]; and no later than `sent.until`
/// plus it) holding as many requests as were sent, oldest first.
async fn matching(call: &Call<'_>, sent: &Sent) -> Result<Vec<String>, ProviderError> {
    let since = sent.since - CLOCK_SKEW;
    let until = sent.until.map(|until| until + CLOCK_SKEW);
    let mut found = Vec::new();
    let mut after: Option<String> = None;
    'pages: for _ in 0..LIST_PAGES {
        let mut list = call
            .http
            .get(format!("{}/messages/batches", call.profile.base_url))
            .query(&[("limit", LIST_PAGE)]);
        if let Some(after) = &after {
            list = list.query(&[("after_id", after)]);
        }
        let page = send(call, authorized(call, list)).await?;
        let data = page["data"].as_array().ok_or_else(|| malformed(call.profile, "data", &page))?;
        for batch in data {
            let created = batch["created_at"]
                .as_str()
                .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
                .map(|at| at.with_timezone(&Utc))
                .ok_or_else(|| malformed(call.profile, "created_at", batch))?;
            if created < since {
                break 'pages;
            }
            if until.is_some_and(|until| created > until) {
                continue;
            }
            let counts = &batch["request_counts"];
            let requests: u64 = ["processing", "succeeded", "errored", "canceled", "expired"]
                .iter()
                .map(|count| counts[*count].as_u64().unwrap_or(0))
                .sum();
            let id = batch["id"].as_str().filter(|id| is_token(id));
            if let (Some(id), Ok(requests)) = (id, usize::try_from(requests)) {
                if sent.requests.contains(&requests) {
                    found.push(id.to_owned());
                }
            }
        }
        let last = data.last().and_then(|batch| batch["id"].as_str()).map(str::to_owned);
        match (page["has_more"].as_bool(), last) {
            (Some(true), Some(last)) => after = Some(last),
            _ => break,
        }
    }
    found.reverse();
    Ok(found)
}
