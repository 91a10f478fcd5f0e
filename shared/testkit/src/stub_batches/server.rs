//! The HTTP side of [`super::StubBatches`]: OpenAI's Files and Batches routes and Anthropic's
//! Message Batches routes, one handler. A create scripted late is made at once and answered
//! after the delay, outside the lock.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use chrono::Utc;

use super::{step, Api, Batch, Stage, Stubs, BATCH_STUB_KEY};

fn answer(status: StatusCode, body: Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert("content-type", "application/json".parse().expect("static header"));
    response
}

fn not_found() -> Response {
    answer(StatusCode::NOT_FOUND, json!({"error": {"message": "no such thing", "type": "not_found_error"}}))
}

type Shared = (std::sync::Arc<std::sync::Mutex<Stubs>>, String);

pub(super) async fn handle(
    State((state, base_url)): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // A slow provider: every request waits before it is looked at.
    let latency = state.lock().unwrap_or_else(|p| p.into_inner()).latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let (response, late) = {
        let mut stubs = state.lock().unwrap_or_else(|p| p.into_inner());
        let creates = stubs.creates;
        let response = respond(&mut stubs, &base_url, &method, &uri, &headers, &body);
        let late = (stubs.creates > creates && stubs.late_creates > 0).then(|| {
            stubs.late_creates -= 1;
            stubs.late_by
        });
        (response, late)
    };
    if let Some(late) = late {
        tokio::time::sleep(late).await;
    }
    response
}

fn respond(
    stubs: &mut Stubs,
    base_url: &str,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    if header("authorization") != format!("Bearer {BATCH_STUB_KEY}") && header("x-api-key") != BATCH_STUB_KEY
    {
        stubs.unauthorized += 1;
        return answer(
            StatusCode::UNAUTHORIZED,
            json!({"error": {"message": "bad key", "type": "authentication_error"}}),
        );
    }
    let path = uri.path().trim_start_matches("/v1/").to_owned();
    let parts: Vec<&str> = path.split('/').collect();
    match (method.as_str(), parts.as_slice()) {
        ("POST", ["chat", "completions"]) => {
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let schema =
                request.pointer("/response_format/json_schema/schema").cloned().unwrap_or(Value::Null);
            let content = crate::stub_provider::answer_for_schema(&schema).to_string();
            stubs.on_demand.push(request);
            answer(
                StatusCode::OK,
                json!({"id": "chatcmpl-stub", "object": "chat.completion", "model": "stub-batch-model",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}),
            )
        }
        ("POST", ["files"]) => upload(stubs, &header("content-type"), body),
        ("DELETE", ["files", id]) => match stubs.files.remove(*id) {
            Some(text) => {
                stubs.file_deletes += 1;
                let result_file = stubs
                    .batches
                    .iter()
                    .any(|b| b.output_file.as_deref() == Some(*id) || b.error_file.as_deref() == Some(*id));
                if result_file {
                    stubs.deleted_result_bytes += text.len();
                }
                answer(StatusCode::OK, json!({"id": id, "object": "file", "deleted": true}))
            }
            None => not_found(),
        },
        ("GET", ["files", id, "content"]) => match stubs.files.get(*id).cloned() {
            Some(text) => serve_file(stubs, text),
            None => not_found(),
        },
        ("POST", ["batches"]) => {
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let file = request["input_file_id"].as_str().unwrap_or_default().to_owned();
            let Some(text) = stubs.files.get(&file).cloned() else { return not_found() };
            let lines = text
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .map(|line| (line["custom_id"].as_str().unwrap_or_default().to_owned(), line["body"].clone()))
                .collect();
            stubs.creates += 1;
            stubs.next += 1;
            let id = format!("batch_{}", stubs.next);
            stubs.batches.push(Batch {
                id: id.clone(),
                api: Api::OpenAi,
                stage: Stage::Validating,
                lines,
                metadata: request["metadata"].clone(),
                input_file_id: Some(file),
                output_file: None,
                error_file: None,
                created_at: Utc::now(),
            });
            answer(StatusCode::OK, openai_batch(stubs.batches.last().expect("just pushed")))
        }
        ("GET", ["batches"]) => {
            let query = uri.query().unwrap_or_default();
            let param = |name: &str| {
                query.split('&').find_map(|pair| pair.strip_prefix(&format!("{name}="))).map(str::to_owned)
            };
            let limit: usize = param("limit").and_then(|l| l.parse().ok()).unwrap_or(20);
            // Newest first, as OpenAI lists them.
            let all: Vec<&Batch> = stubs.batches.iter().rev().filter(|b| b.api == Api::OpenAi).collect();
            let start = match param("after") {
                Some(after) => all.iter().position(|b| b.id == after).map_or(all.len(), |i| i + 1),
                None => 0,
            };
            let page: Vec<Value> = all.iter().skip(start).take(limit).map(|b| openai_batch(b)).collect();
            let has_more = start + page.len() < all.len();
            answer(StatusCode::OK, json!({"object": "list", "data": page, "has_more": has_more}))
        }
        ("GET", ["batches", id]) | ("POST", ["batches", id, "cancel"]) => {
            let Some(index) = stubs.batches.iter().position(|b| b.id == *id && b.api == Api::OpenAi) else {
                return not_found();
            };
            if *method == Method::POST {
                stubs.cancels += 1;
                stubs.batches[index].stage = Stage::Cancelling;
            } else if stubs.auto {
                step(stubs, index);
            }
            answer(StatusCode::OK, openai_batch(&stubs.batches[index]))
        }
        ("POST", ["messages", "batches"]) => {
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let lines = request["requests"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| (r["custom_id"].as_str().unwrap_or_default().to_owned(), r["params"].clone()))
                .collect();
            stubs.creates += 1;
            stubs.next += 1;
            let id = format!("msgbatch_{}", stubs.next);
            stubs.batches.push(Batch::anthropic(id, lines));
            answer(StatusCode::OK, anthropic_batch(stubs.batches.last().expect("just pushed"), base_url))
        }
        ("GET", ["messages", "batches"]) => {
            let query = uri.query().unwrap_or_default();
            let param = |name: &str| {
                query.split('&').find_map(|pair| pair.strip_prefix(&format!("{name}="))).map(str::to_owned)
            };
            let limit: usize = param("limit").and_then(|l| l.parse().ok()).unwrap_or(20).clamp(1, 1000);
            // Newest first, as Anthropic lists them.
            let shown_before = Utc::now() - chrono::Duration::from_std(stubs.list_lag).unwrap_or_default();
            let all: Vec<&Batch> = stubs
                .batches
                .iter()
                .rev()
                .filter(|b| b.api == Api::Anthropic && b.created_at <= shown_before)
                .collect();
            let start = match param("after_id") {
                Some(after) => all.iter().position(|b| b.id == after).map_or(all.len(), |i| i + 1),
                None => 0,
            };
            let page: Vec<Value> =
                all.iter().skip(start).take(limit).map(|b| anthropic_batch(b, base_url)).collect();
            let has_more = start + page.len() < all.len();
            let first = page.first().map(|b| b["id"].clone()).unwrap_or(Value::Null);
            let last = page.last().map(|b| b["id"].clone()).unwrap_or(Value::Null);
            answer(
                StatusCode::OK,
                json!({"data": page, "has_more": has_more, "first_id": first, "last_id": last}),
            )
        }
        ("DELETE", ["messages", "batches", id]) => {
            let Some(index) = stubs.batches.iter().position(|b| b.id == *id && b.api == Api::Anthropic)
            else {
                return not_found();
            };
            if !matches!(
                stubs.batches[index].stage,
                Stage::Completed | Stage::Failed | Stage::Expired | Stage::Cancelled
            ) {
                return answer(
                    StatusCode::BAD_REQUEST,
                    json!({"type": "error", "error": {"type": "invalid_request_error",
                        "message": "Message Batches can only be deleted once they have finished processing."}}),
                );
            }
            let removed = stubs.batches.remove(index);
            if let Some(file) = removed.output_file {
                stubs.files.remove(&file);
            }
            stubs.batch_deletes += 1;
            answer(StatusCode::OK, json!({"id": id, "type": "message_batch_deleted"}))
        }
        ("GET", ["messages", "batches", id]) | ("POST", ["messages", "batches", id, "cancel"]) => {
            let Some(index) = stubs.batches.iter().position(|b| b.id == *id && b.api == Api::Anthropic)
            else {
                return not_found();
            };
            if *method == Method::POST {
                stubs.cancels += 1;
                stubs.batches[index].stage = Stage::Cancelling;
            } else if stubs.auto {
                step(stubs, index);
            }
            answer(StatusCode::OK, anthropic_batch(&stubs.batches[index], base_url))
        }
        ("GET", ["messages", "batches", id, "results"]) => {
            let file = stubs.batches.iter().find(|b| b.id == *id).and_then(|b| b.output_file.clone());
            match file.and_then(|file| stubs.files.get(&file).cloned()) {
                Some(text) => serve_file(stubs, text),
                None => not_found(),
            }
        }
        _ => not_found(),
    }
}

/// A result file's content, or the 500 a test asked for ([`super::StubBatches::fail_file_reads`]).
fn serve_file(stubs: &mut Stubs, text: String) -> Response {
    stubs.file_reads += 1;
    if stubs.failing_reads > 0 {
        stubs.failing_reads -= 1;
        return answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": "stub fault", "type": "server_error"}}),
        );
    }
    (StatusCode::OK, text).into_response()
}

/// `POST /files`: a multipart form with `purpose=batch` and the JSONL `file`.
fn upload(stubs: &mut Stubs, content_type: &str, body: &[u8]) -> Response {
    let Some(boundary) = content_type.split("boundary=").nth(1) else {
        return answer(StatusCode::BAD_REQUEST, json!({"error": {"message": "not multipart"}}));
    };
    let text = String::from_utf8_lossy(body);
    let mut purpose = None;
    let mut file = None;
    for part in text.split(&format!("--{boundary}")) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else { continue };
        let content = content.strip_suffix("\r\n").unwrap_or(content);
        if head.contains("name=\"purpose\"") {
            purpose = Some(content.to_owned());
        } else if head.contains("name=\"file\"") {
            file = Some(content.to_owned());
        }
    }
    let (Some("batch"), Some(file)) = (purpose.as_deref(), file) else {
        return answer(
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "purpose=batch and a file are required"}}),
        );
    };
    stubs.uploads += 1;
    stubs.next += 1;
    let id = format!("file-in{}", stubs.next);
    let bytes = file.len();
    stubs.files.insert(id.clone(), file);
    answer(StatusCode::OK, json!({"id": id, "object": "file", "purpose": "batch", "bytes": bytes}))
}

fn openai_batch(batch: &Batch) -> Value {
    let status = match batch.stage {
        Stage::Validating => "validating",
        Stage::InProgress => "in_progress",
        Stage::Completed => "completed",
        Stage::Failed => "failed",
        Stage::Expired => "expired",
        Stage::Cancelling => "cancelling",
        Stage::Cancelled => "cancelled",
    };
    let errors = (batch.stage == Stage::Failed).then(|| {
        json!({"object": "list", "data": [{"code": "invalid_file", "message": "the stub failed the batch"}]})
    });
    json!({"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "completion_window": "24h",
        "input_file_id": batch.input_file_id, "status": status, "output_file_id": batch.output_file,
        "error_file_id": batch.error_file, "metadata": batch.metadata, "errors": errors,
        "request_counts": {"total": batch.lines.len(), "completed": 0, "failed": 0}})
}

fn anthropic_batch(batch: &Batch, base_url: &str) -> Value {
    let ended = matches!(batch.stage, Stage::Completed | Stage::Failed | Stage::Expired | Stage::Cancelled);
    let status = match batch.stage {
        Stage::Cancelling => "canceling",
        _ if ended => "ended",
        _ => "in_progress",
    };
    let canceled = matches!(batch.stage, Stage::Cancelling | Stage::Cancelled);
    let n = batch.lines.len();
    let count = |stage: Stage| if batch.stage == stage { n } else { 0 };
    json!({"id": batch.id, "type": "message_batch", "processing_status": status,
        "created_at": batch.created_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "request_counts": {"processing": if ended { 0 } else { n }, "succeeded": count(Stage::Completed),
            "errored": count(Stage::Failed), "expired": count(Stage::Expired), "canceled": count(Stage::Cancelled)},
        "cancel_initiated_at": if canceled { json!("2026-12-02T00:00:00Z") } else { Value::Null },
        "results_url": if ended { json!(format!("{base_url}/messages/batches/{}/results", batch.id)) } else { Value::Null }})
}
