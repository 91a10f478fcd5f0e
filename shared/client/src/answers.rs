//! The API's answer bodies (docs/api.md, "Bodies"), owned and deserialized. Fields the contract
//! may add later are kept in `extra`, so a newer server's answer still reads, and prints back
//! whole. The routes that act on many tasks at once have theirs in submodules: a task's replays,
//! operations (cancel or replay by filter), holds.

pub(crate) mod holds;
pub(crate) mod operations;
pub(crate) mod replays;

use aitasks_contracts::{RunState, TaskStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// A task (`GET /v1/tasks/{id}` and the listing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: Uuid,
    pub app_id: String,
    pub run_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_subject: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_user_id: Option<String>,
    pub step_key: String,
    pub effect_key: String,
    pub kind: String,
    pub request: Value,
    pub input_hash: String,
    pub model_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_config_hash: Option<String>,
    pub status: TaskStatus,
    pub output: Option<Value>,
    /// `{inputTokens, outputTokens, model}`, and `estimatedCostUsd` when the profile has prices.
    pub usage: Option<Value>,
    pub attempts: u32,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_by: Option<DateTime<Utc>>,
    /// The task this one replays (present only on a replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<Uuid>,
    /// Fields this client does not know yet.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Task {
    /// Whether the task has ended (it never changes again).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }
}

/// A run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: Uuid,
    pub app_id: String,
    pub scope_id: String,
    pub state: RunState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Value>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Whether a create made its task or found it by its effect key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// 201: a new task (a result-cache hit too).
    Created,
    /// 200: the effect key's task, as it is; nothing new was stored.
    Existing,
}

impl Outcome {
    /// The outcome of a create answered with this status, if it is a success.
    pub fn of_status(status: u16) -> Option<Outcome> {
        match status {
            201 => Some(Outcome::Created),
            200 => Some(Outcome::Existing),
            _ => None,
        }
    }
}

/// What `POST /v1/tasks` answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Created {
    pub outcome: Outcome,
    pub task: Task,
}

/// One page of `GET /v1/tasks?runId=|scopeId=`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPage {
    pub tasks: Vec<Task>,
    /// Pass as `after` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Uuid>,
}

/// A task in a batch's answer: enough to follow it (docs/api.md, "Batches").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSummary {
    pub id: Uuid,
    pub run_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect_key: Option<String>,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    pub created_at: DateTime<Utc>,
    /// What the answer left out for room (`output`, then the keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
}

/// `POST /v1/tasks/release`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    pub released: bool,
}

/// `DELETE /v1/scopes/{scopeId}/tasks`: how many were deleted, and whether rows are left (send
/// it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    pub deleted: u64,
    pub more: bool,
}

/// A source with application-owned tasks not yet released.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRef {
    pub scope_id: String,
    pub source_id: String,
}

/// One page of `GET /v1/unreleased-sources` (100 a page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreleasedPage {
    pub sources: Vec<SourceRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<SourceRef>,
}
