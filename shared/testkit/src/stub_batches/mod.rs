//! Stubs of the providers' batch APIs, real HTTP servers speaking their wire formats:
//! [`StubBatches`] serves OpenAI's Files and Batches API (`/v1/files`, `/v1/batches`) and
//! Anthropic's Message Batches (`/v1/messages/batches`) under one base URL; [`BedrockBatchStub`]
//! serves Bedrock's batch-inference control plane, checks every request's SigV4 signature, and
//! keeps the records in moto's S3.
//!
//! Each line is answered from its own request's schema (as [`crate::Reply::Auto`] answers), in
//! a shuffled order; a test scripts single lines ([`LineScript`]: an invalid answer, an error,
//! no line, a duplicate, an oversized line), moves batches on ([`StubBatches::advance`], or one
//! step per status read unless [`StubBatches::hold`]), and picks how they end
//! ([`BatchOutcome`]). Every create is counted, so a test can prove a resubmission made none;
//! a create can be answered late ([`StubBatches::answer_creates_late`]: the batch is made at
//! once, its answer comes after the client gave up), Anthropic's batches are listed newest first
//! (`GET /v1/messages/batches`), and the deletes (`DELETE /v1/files/{id}`,
//! `DELETE /v1/messages/batches/{id}`, only once ended) are real and counted.
//! The same base URL answers OpenAI's on-demand chat completions too (each valid from its
//! schema, counted), as a batching profile's endpoint does when a task runs on-demand.

mod answers;
mod bedrock;
mod hygiene;
mod server;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use serde_json::{json, Value};

pub use bedrock::{BedrockBatchStub, BATCH_AWS_ACCESS_KEY, BATCH_AWS_SECRET_KEY};

use answers::{answered_line, anthropic_error};
pub(crate) use answers::{pad, scripted_answer};

/// The key both batch APIs of [`StubBatches`] accept (`Authorization: Bearer` or `x-api-key`).
pub const BATCH_STUB_KEY: &str = "sk-batch-stub-key";

/// How the batches end when they are advanced past in-progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOutcome {
    /// Every line answered (or as scripted).
    Complete,
    /// The batch fails as a whole (OpenAI `failed`, Bedrock `Failed`; Anthropic, which has no
    /// failed batches, errors every line with `api_error`).
    Fail,
    /// The batch expires: every line unanswered (`batch_expired`, `expired`; Bedrock `Expired`
    /// writes nothing).
    Expire,
}

/// What one task's line does instead of a valid answer.
#[derive(Debug, Clone, PartialEq)]
pub enum LineScript {
    /// An answer the checker refuses (`{}`).
    Invalid,
    /// An answer the checker refuses for the NUL character it holds (which Postgres cannot
    /// store either).
    InvalidWithNul,
    /// An error line with this HTTP status.
    Error(u16),
    /// No line at all.
    Omit,
    /// The valid line twice.
    Duplicate,
    /// A valid answer whose line is longer than this many bytes.
    Oversized(usize),
    /// A valid answer whose free-text fields say this (as [`StubBatches::answer_with_text`] does
    /// for every line; OpenAI's and Anthropic's batches).
    Says(String),
}

/// Where a stub batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Validating,
    InProgress,
    Completed,
    Failed,
    Expired,
    Cancelling,
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    OpenAi,
    Anthropic,
}

pub(crate) struct Batch {
    pub(crate) id: String,
    pub(crate) api: Api,
    pub(crate) stage: Stage,
    /// `(custom_id, request body)` as submitted.
    pub(crate) lines: Vec<(String, Value)>,
    pub(crate) metadata: Value,
    pub(crate) input_file_id: Option<String>,
    pub(crate) output_file: Option<String>,
    pub(crate) error_file: Option<String>,
    pub(crate) created_at: DateTime<Utc>,
}

impl Batch {
    /// A message batch as Anthropic makes one: in progress, keyed by nothing of ours.
    pub(crate) fn anthropic(id: String, lines: Vec<(String, Value)>) -> Batch {
        Batch {
            id,
            api: Api::Anthropic,
            stage: Stage::InProgress,
            lines,
            metadata: Value::Null,
            input_file_id: None,
            output_file: None,
            error_file: None,
            created_at: Utc::now(),
        }
    }
}

pub(crate) struct Stubs {
    pub(crate) files: HashMap<String, String>,
    pub(crate) batches: Vec<Batch>,
    pub(crate) outcome: BatchOutcome,
    pub(crate) auto: bool,
    pub(crate) scripts: HashMap<String, LineScript>,
    pub(crate) creates: usize,
    pub(crate) cancels: usize,
    pub(crate) uploads: usize,
    pub(crate) next: u64,
    pub(crate) random: crate::Xorshift,
    /// Requests refused for their key.
    pub(crate) unauthorized: usize,
    /// Every request waits this long before its answer (a slow provider).
    pub(crate) latency: std::time::Duration,
    /// On-demand chat completions (`POST /v1/chat/completions`) received, their bodies.
    pub(crate) on_demand: Vec<Value>,
    /// The next creates answered this late (how many, and by how long).
    pub(crate) late_creates: usize,
    pub(crate) late_by: Duration,
    pub(crate) file_deletes: usize,
    /// The bytes of result files deleted (so a test reads a file's size after its clean-up).
    pub(crate) deleted_result_bytes: usize,
    pub(crate) batch_deletes: usize,
    /// Anthropic's list shows a batch only this long after it was made.
    pub(crate) list_lag: Duration,
    /// Lines of a canceled or expired batch answered before it ended (the first ones submitted).
    pub(crate) answered_before_end: usize,
    /// What every free-text field of an answer says (cut to the field's `maxLength`).
    pub(crate) answer_text: Option<String>,
    /// Result files served (`GET /files/{id}/content`, Anthropic's `results_url`).
    pub(crate) file_reads: usize,
    /// Result file reads still to refuse with a 500.
    pub(crate) failing_reads: usize,
}

/// The OpenAI and Anthropic batch APIs. Dropping it leaves the server running until the test
/// process ends (as [`crate::DurableStub`]).
#[derive(Clone)]
pub struct StubBatches {
    /// The base URL a profile names (`http://127.0.0.1:<port>/v1`), for either provider.
    pub base_url: String,
    state: Arc<Mutex<Stubs>>,
}

impl StubBatches {
    pub async fn start() -> StubBatches {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let state = Arc::new(Mutex::new(Stubs {
            files: HashMap::new(),
            batches: Vec::new(),
            outcome: BatchOutcome::Complete,
            auto: true,
            scripts: HashMap::new(),
            creates: 0,
            cancels: 0,
            uploads: 0,
            next: 0,
            random: crate::Xorshift::new(0x5eed_ba7c),
            unauthorized: 0,
            latency: std::time::Duration::ZERO,
            on_demand: Vec::new(),
            late_creates: 0,
            late_by: Duration::ZERO,
            file_deletes: 0,
            deleted_result_bytes: 0,
            batch_deletes: 0,
            list_lag: Duration::ZERO,
            answered_before_end: 0,
            answer_text: None,
            file_reads: 0,
            failing_reads: 0,
        }));
        let router =
            axum::Router::new().fallback(server::handle).with_state((state.clone(), base_url.clone()));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        StubBatches { base_url, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stubs> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How batches end from now on.
    pub fn set_outcome(&self, outcome: BatchOutcome) {
        self.lock().outcome = outcome;
    }

    /// Move every batch one step (validating → in progress → its outcome; cancelling → cancelled).
    pub fn advance(&self) {
        let mut stubs = self.lock();
        for index in 0..stubs.batches.len() {
            step(&mut stubs, index);
        }
    }

    /// Status reads no longer move batches on (only [`StubBatches::advance`] does).
    pub fn hold(&self) {
        self.lock().auto = false;
    }

    /// Each status read moves its batch one step (the default).
    pub fn release(&self) {
        self.lock().auto = true;
    }

    /// Script the line of task `custom_id` (a task id) in every batch from now on.
    pub fn script(&self, custom_id: impl ToString, script: LineScript) {
        self.lock().scripts.insert(custom_id.to_string(), script);
    }

    /// Every request waits this long before it is answered: a provider that holds the sweep's
    /// batch duties.
    pub fn set_latency(&self, latency: std::time::Duration) {
        self.lock().latency = latency;
    }

    /// Batches created (OpenAI `POST /batches` and Anthropic `POST /messages/batches`).
    pub fn creates(&self) -> usize {
        self.lock().creates
    }

    /// Batches canceled (OpenAI `POST /batches/{id}/cancel`, Anthropic `.../cancel`).
    pub fn cancels(&self) -> usize {
        self.lock().cancels
    }

    /// Files uploaded (`POST /files`).
    pub fn uploads(&self) -> usize {
        self.lock().uploads
    }

    /// Requests refused for a missing or wrong key.
    pub fn unauthorized(&self) -> usize {
        self.lock().unauthorized
    }

    /// On-demand calls received (`POST /v1/chat/completions`: what a profile that batches asks
    /// when a task runs on-demand, a repair turn among them).
    pub fn on_demand_calls(&self) -> usize {
        self.lock().on_demand.len()
    }

    /// Their request bodies, in order.
    pub fn on_demand_requests(&self) -> Vec<Value> {
        self.lock().on_demand.clone()
    }

    /// A batch canceled or expired from now on had answered its first `lines` submitted before
    /// it ended (the providers keep those in its results); the rest are unanswered.
    pub fn answer_before_end(&self, lines: usize) {
        self.lock().answered_before_end = lines;
    }

    /// Every free-text field of the answers written from now on says `text` (cut to the field's
    /// `maxLength`): long answers, for result files of any size. Characters JSON escapes (`"`,
    /// `\\`, newlines) grow twice in an OpenAI line, whose answer is a JSON string inside JSON.
    pub fn answer_with_text(&self, text: impl Into<String>) {
        self.lock().answer_text = Some(text.into());
    }

    /// The next `reads` reads of a result file answer `500` (a provider's passing fault).
    pub fn fail_file_reads(&self, reads: usize) {
        self.lock().failing_reads = reads;
    }

    /// Result files served so far (refused reads included).
    pub fn file_reads(&self) -> usize {
        self.lock().file_reads
    }

    /// The bytes of every result file written so far.
    pub fn result_bytes(&self) -> usize {
        let stubs = self.lock();
        let ids: Vec<&String> =
            stubs.batches.iter().flat_map(|b| b.output_file.iter().chain(b.error_file.iter())).collect();
        ids.iter().filter_map(|id| stubs.files.get(*id)).map(String::len).sum::<usize>()
            + stubs.deleted_result_bytes
    }

    /// Every line submitted so far, `(custom_id, request body)`, in order.
    pub fn submitted_lines(&self) -> Vec<(String, Value)> {
        self.lock().batches.iter().flat_map(|batch| batch.lines.clone()).collect()
    }
}

/// One step of batch `index`; the final one writes its results.
pub(crate) fn step(stubs: &mut Stubs, index: usize) {
    let outcome = stubs.outcome;
    let stage = stubs.batches[index].stage;
    let next = match stage {
        Stage::Validating => Stage::InProgress,
        Stage::InProgress => match outcome {
            BatchOutcome::Complete => Stage::Completed,
            BatchOutcome::Fail => Stage::Failed,
            BatchOutcome::Expire => Stage::Expired,
        },
        Stage::Cancelling => Stage::Cancelled,
        done => done,
    };
    if next == stage {
        return;
    }
    stubs.batches[index].stage = next;
    if matches!(next, Stage::Completed | Stage::Failed | Stage::Expired | Stage::Cancelled) {
        write_results(stubs, index, next);
    }
}

/// The result lines of a batch that just ended, shuffled, as its API writes them.
fn write_results(stubs: &mut Stubs, index: usize, stage: Stage) {
    let api = stubs.batches[index].api;
    if api == Api::OpenAi && stage == Stage::Failed {
        return;
    }
    let mut output = Vec::new();
    let mut errors = Vec::new();
    let lines = stubs.batches[index].lines.clone();
    let text = stubs.answer_text.clone();
    for (n, (custom_id, body)) in lines.iter().enumerate() {
        let script = stubs.scripts.get(custom_id).cloned();
        // A canceled or expired batch keeps the lines it answered before it ended.
        let ended_first = n >= stubs.answered_before_end;
        let line = match (stage, api) {
            (Stage::Expired | Stage::Cancelled, _) if !ended_first => {
                answered_line(n, custom_id, body, &script, api, &text)
            }
            (Stage::Expired, Api::OpenAi) => {
                Err(json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}))
            }
            (Stage::Cancelled, Api::OpenAi) => {
                Err(json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                "response": null, "error": {"code": "batch_cancelled", "message": "This request was cancelled."}}))
            }
            (Stage::Expired, Api::Anthropic) => {
                Ok(json!({"custom_id": custom_id, "result": {"type": "expired"}}))
            }
            (Stage::Cancelled, Api::Anthropic) => {
                Ok(json!({"custom_id": custom_id, "result": {"type": "canceled"}}))
            }
            (Stage::Failed, Api::Anthropic) => Ok(anthropic_error(custom_id, 500)),
            _ => match (&script, api) {
                (Some(LineScript::Omit), _) => continue,
                (Some(LineScript::Error(status)), Api::OpenAi) => Err(json!({"id": format!("batch_req_{n}"),
                    "custom_id": custom_id, "response": {"status_code": status, "request_id": format!("req_{n}"),
                    "body": {"error": {"message": "stub error", "type": if *status >= 500 { "server_error" } else { "invalid_request_error" }, "code": null}}},
                    "error": null})),
                (Some(LineScript::Error(status)), Api::Anthropic) => Ok(anthropic_error(custom_id, *status)),
                _ => answered_line(n, custom_id, body, &script, api, &text),
            },
        };
        let copies = if script == Some(LineScript::Duplicate) { 2 } else { 1 };
        for _ in 0..copies {
            match &line {
                Ok(line) => output.push(line.to_string()),
                Err(line) => errors.push(line.to_string()),
            }
        }
    }
    shuffle(&mut output, &mut stubs.random);
    shuffle(&mut errors, &mut stubs.random);
    match api {
        Api::Anthropic => {
            let id = store_file(stubs, output);
            stubs.batches[index].output_file = Some(id);
        }
        Api::OpenAi => {
            if !output.is_empty() {
                let id = store_file(stubs, output);
                stubs.batches[index].output_file = Some(id);
            }
            if !errors.is_empty() {
                let id = store_file(stubs, errors);
                stubs.batches[index].error_file = Some(id);
            }
        }
    }
}

/// A results file of `lines`: its id.
fn store_file(stubs: &mut Stubs, lines: Vec<String>) -> String {
    stubs.next += 1;
    let id = format!("file-out{}", stubs.next);
    stubs.files.insert(id.clone(), lines.iter().map(|l| format!("{l}\n")).collect());
    id
}

pub(crate) fn shuffle<T>(items: &mut [T], random: &mut crate::Xorshift) {
    for i in (1..items.len()).rev() {
        let j = random.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}
