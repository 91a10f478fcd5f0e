//! OpenAI's Batch API: the lines uploaded as a JSONL file (`POST /files`, `purpose=batch`), a
//! batch of it (`POST /batches`, `completion_window: 24h`, our batch id in its metadata), its
//! status (`GET /batches/{id}`), its output and error files (`GET /files/{id}/content`), and
//! `POST /batches/{id}/cancel`. A submit first looks for a batch whose metadata names our batch
//! id (the last [`LIST_PAGES`] pages of batches), so a retried submit makes none twice. Once we
//! are done with a batch its files are deleted (`DELETE /files/{id}`, `clean_up`).

use aitasks_contracts::AiRequest;
use async_trait::async_trait;
use serde_json::{json, Value};
use uuid::Uuid;

use super::format::BatchFormat;
use super::judge::{judge, line_body, path_id, unanswered};
use super::left_behind::{gone, Cleanup, Found, Sent};
use super::line::{BatchLine, BatchPhase, LineOutcome};
use crate::error::{said, ProviderError};
use crate::wire::{error_code, malformed, open as open_stream, scrub_secret, send, status_error, Call};

/// How many pages of 100 batches a submit looks through for one it already made.
const LIST_PAGES: usize = 10;
/// The metadata key that carries our batch id.
const METADATA_KEY: &str = "aitasks_batch";

/// OpenAI's (and any OpenAI-compatible endpoint's) batch API.
pub(super) struct OpenAiBatches<'a> {
    pub(super) call: Call<'a>,
}

#[async_trait]
impl BatchFormat for OpenAiBatches<'_> {
    async fn submit(&self, batch_id: Uuid, lines: &[BatchLine<'_>]) -> Result<String, ProviderError> {
        let call = &self.call;
        if let Some(existing) = existing(call, batch_id).await? {
            tracing::info!(provider_batch = %existing, "the batch was submitted before; not again");
            return Ok(existing);
        }
        let mut jsonl = String::new();
        for line in lines {
            let entry = json!({
                "custom_id": line.task_id.to_string(),
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": line_body(call.profile, line.request),
            });
            jsonl.push_str(&entry.to_string());
            jsonl.push('\n');
        }
        let boundary = format!("aitasks-{}", Uuid::new_v4().simple());
        let mut form = Vec::with_capacity(jsonl.len() + 512);
        form.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
                 --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"aitasks-{batch_id}.jsonl\"\r\n\
                 Content-Type: application/jsonl\r\n\r\n"
            )
            .as_bytes(),
        );
        form.extend_from_slice(jsonl.as_bytes());
        form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let upload = call
            .http
            .post(format!("{}/files", call.profile.base_url))
            .header("content-type", format!("multipart/form-data; boundary={boundary}"))
            .body(form);
        let file = send(call, authorized(call, upload)).await?;
        let file_id = file["id"].as_str().ok_or_else(|| malformed(call.profile, "file id", &file))?;
        let create = call.http.post(format!("{}/batches", call.profile.base_url)).json(&json!({
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "metadata": {METADATA_KEY: batch_id.to_string()},
        }));
        let batch = send(call, authorized(call, create)).await?;
        batch["id"].as_str().map(str::to_owned).ok_or_else(|| malformed(call.profile, "batch id", &batch))
    }

    async fn status(&self, batch: &str) -> Result<BatchPhase, ProviderError> {
        let call = &self.call;
        let url = format!("{}/batches/{}", call.profile.base_url, path_id(batch, "batch")?);
        let batch = send(call, authorized(call, call.http.get(url))).await?;
        let state = batch["status"].as_str().ok_or_else(|| malformed(call.profile, "status", &batch))?;
        let files: Vec<String> = ["output_file_id", "error_file_id"]
            .iter()
            .filter_map(|field| batch[*field].as_str())
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(match state {
            "validating" | "in_progress" | "finalizing" | "cancelling" => BatchPhase::Working,
            "completed" => BatchPhase::Done { results: files, stopped: None },
            other => {
                // What the provider wrote: a short token only.
                let state = if crate::error::is_token(other) { other } else { "unknown" };
                let code = batch.pointer("/errors/data/0/code").and_then(Value::as_str);
                let why = match code.filter(|code| crate::error::is_token(code)) {
                    Some(code) => format!("{state}: {code}"),
                    None => state.to_owned(),
                };
                BatchPhase::Done { results: files, stopped: Some(why) }
            }
        })
    }

    async fn cancel(&self, batch: &str) -> Result<(), ProviderError> {
        let call = &self.call;
        let url = format!("{}/batches/{}/cancel", call.profile.base_url, path_id(batch, "batch")?);
        send(call, authorized(call, call.http.post(url))).await.map(drop)
    }

    /// By our batch id in a batch's metadata: keyed.
    async fn find(&self, batch_id: Uuid, _sent: &Sent) -> Result<Found, ProviderError> {
        Ok(existing(&self.call, batch_id).await?.map_or(Found::Nothing, Found::Keyed))
    }

    /// Delete the batch's input, output and error files once it has ended (the batch object itself
    /// has no delete); a batch still running is canceled first.
    async fn clean_up(&self, batch: &str) -> Result<Cleanup, ProviderError> {
        let call = &self.call;
        let url = format!("{}/batches/{}", call.profile.base_url, path_id(batch, "batch")?);
        let state = match send(call, authorized(call, call.http.get(url))).await {
            Ok(state) => state,
            Err(error) if gone(&error) => return Ok(Cleanup::Done),
            Err(error) => return Err(error),
        };
        match state["status"].as_str() {
            Some("completed" | "failed" | "expired" | "cancelled") => {}
            Some("validating" | "in_progress") => {
                self.cancel(batch).await?;
                return Ok(Cleanup::NotYet);
            }
            Some("finalizing" | "cancelling") => return Ok(Cleanup::NotYet),
            _ => return Err(malformed(call.profile, "status", &state)),
        }
        for field in ["input_file_id", "output_file_id", "error_file_id"] {
            let Some(file) = state[field].as_str().filter(|id| !id.is_empty()) else { continue };
            let url = format!("{}/files/{}", call.profile.base_url, path_id(file, "file")?);
            match send(call, authorized(call, call.http.delete(url))).await {
                Ok(_) => {}
                Err(error) if gone(&error) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(Cleanup::Done)
    }

    /// An output or error file, its body to be read as it arrives.
    async fn open(&self, file_id: &str) -> Result<reqwest::Response, ProviderError> {
        let call = &self.call;
        let url = format!("{}/files/{}/content", call.profile.base_url, path_id(file_id, "file")?);
        open_stream(call, authorized(call, call.http.get(url))).await
    }

    fn id_field(&self) -> &'static str {
        "custom_id"
    }

    /// One line: `{"custom_id", "response": {"status_code", "body"}, "error"}`.
    fn outcome(&self, line: &Value, request: &AiRequest) -> LineOutcome {
        let profile = self.call.profile;
        if let Some(response) = line.get("response").filter(|r| r.is_object()) {
            let body = &response["body"];
            return match response["status_code"].as_u64().and_then(|s| u16::try_from(s).ok()) {
                Some(200) => judge(profile, request, body),
                Some(status) if status >= 400 => {
                    let text = scrub_secret(body.to_string(), profile);
                    let code = error_code(&text);
                    LineOutcome::Failed(status_error(status, None, code.as_deref(), &text, &profile.model))
                }
                _ => LineOutcome::Failed(malformed(profile, "response.status_code", line)),
            };
        }
        let error = &line["error"];
        match error["code"].as_str() {
            Some("batch_expired") => unanswered("expired"),
            Some("batch_cancelled") => unanswered("canceled"),
            code if error.is_object() => {
                let text = scrub_secret(error.to_string(), profile);
                LineOutcome::Failed(ProviderError::Server {
                    status: 500,
                    message: said(code, "error", &text),
                })
            }
            _ => LineOutcome::Failed(malformed(profile, "response or error", line)),
        }
    }
}

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    match &call.profile.api_key {
        Some(key) => request.bearer_auth(key.expose()),
        None => request,
    }
}

/// The batch made before for `batch_id`, if any: the last [`LIST_PAGES`] pages of batches, looked
/// through for our batch id in their metadata.
async fn existing(call: &Call<'_>, batch_id: Uuid) -> Result<Option<String>, ProviderError> {
    let wanted = batch_id.to_string();
    let mut after: Option<String> = None;
    for _ in 0..LIST_PAGES {
        let mut list = call.http.get(format!("{}/batches", call.profile.base_url)).query(&[("limit", "100")]);
        if let Some(after) = &after {
            list = list.query(&[("after", after)]);
        }
        let page = send(call, authorized(call, list)).await?;
        let data = page["data"].as_array().ok_or_else(|| malformed(call.profile, "data", &page))?;
        if let Some(found) = data.iter().find(|batch| batch["metadata"][METADATA_KEY] == wanted.as_str()) {
            return Ok(found["id"].as_str().map(str::to_owned));
        }
        let last = data.last().and_then(|batch| batch["id"].as_str()).map(str::to_owned);
        match (page["has_more"].as_bool(), last) {
            (Some(true), Some(last)) => after = Some(last),
            _ => return Ok(None),
        }
    }
    Ok(None)
}
