//! The HTTP API's answer bodies (docs/api.md, "Bodies"), built from what the store holds. They
//! are their own types so that a column the store adds (or keeps for itself, such as the cache
//! key or the heartbeat) never reaches a caller by accident.

use aitasks_contracts::{RunState, TaskStatus};
use aitasks_store::{ListedTask, Run, Task};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use uuid::Uuid;

/// A task as callers see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAnswer<'a> {
    pub id: Uuid,
    pub app_id: &'a str,
    pub run_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_subject: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_user_id: Option<&'a str>,
    pub step_key: &'a str,
    pub effect_key: &'a str,
    pub kind: &'a str,
    pub request: Document<'a>,
    pub input_hash: &'a str,
    pub model_id: &'a str,
    /// Provider and model only: the stored reference's `baseUrl` stays with the operator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_config_hash: Option<&'a str>,
    pub status: TaskStatus,
    pub output: Option<Document<'a>>,
    pub usage: Option<&'a Value>,
    pub attempts: i32,
    pub error_code: Option<&'a str>,
    pub error_message: Option<&'a str>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
    /// A deferred task's window end (`delivery.deferred.within` after its creation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred_by: Option<DateTime<Utc>>,
    /// The task this one replays (docs/api.md, "Replaying a task"): a replay only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<uuid::Uuid>,
}

impl<'a> From<&'a Task> for TaskAnswer<'a> {
    fn from(task: &'a Task) -> TaskAnswer<'a> {
        TaskAnswer {
            id: task.id,
            app_id: &task.app_id,
            run_id: task.run_id,
            usage_subject: task.usage_subject.as_ref(),
            usage_user_id: task.usage_user_id.as_deref(),
            step_key: &task.step_key,
            effect_key: &task.effect_key,
            kind: &task.kind,
            request: Document::Tree(&task.request),
            input_hash: &task.input_hash,
            model_id: &task.model_id,
            model_ref: task.model_ref.as_ref().map(public_model_ref),
            model_config_hash: task.model_config_hash.as_deref(),
            status: task.status,
            output: task.output.as_ref().map(Document::Tree),
            usage: task.usage.as_ref(),
            attempts: task.attempts,
            error_code: task.error_code.as_deref(),
            error_message: task.error_message.as_deref(),
            cancel_requested_at: task.cancel_requested_at,
            created_at: task.created_at,
            started_at: task.started_at,
            completed_at: task.completed_at,
            updated_at: task.updated_at,
            deferred_by: task.deferred_by,
            replay_of: task.replay_of,
        }
    }
}

impl<'a> From<&'a ListedTask> for TaskAnswer<'a> {
    /// A listed task answers with its request and output as the store keeps their text.
    fn from(listed: &'a ListedTask) -> TaskAnswer<'a> {
        TaskAnswer {
            request: Document::Text(&listed.request),
            output: listed.output.as_deref().map(Document::Text),
            ..TaskAnswer::from(&listed.task)
        }
    }
}

/// A page of a listing as `GET /v1/tasks?runId=|scopeId=` answers it: serialized straight to
/// text (through a `serde_json::Value` the stored texts would be parsed after all).
#[derive(Debug, Serialize)]
pub struct TaskListAnswer<'a> {
    pub tasks: Vec<TaskAnswer<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<uuid::Uuid>,
}

impl<'a> TaskListAnswer<'a> {
    /// The listed tasks, and where the next page starts (`None`: this was the last).
    pub fn of(tasks: &'a [ListedTask], next: Option<uuid::Uuid>) -> TaskListAnswer<'a> {
        TaskListAnswer { tasks: tasks.iter().map(TaskAnswer::from).collect(), next }
    }
}

/// A JSON document of an answer: a parsed tree, or the text the store keeps (a listing never
/// parses the requests and outputs it answers with).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(untagged)]
pub enum Document<'a> {
    Tree(&'a Value),
    Text(&'a RawValue),
}

impl PartialEq for Document<'_> {
    fn eq(&self, other: &Self) -> bool {
        let text = |document: &Self| match document {
            Document::Tree(value) => value.to_string(),
            Document::Text(raw) => raw.get().to_owned(),
        };
        text(self) == text(other)
    }
}

/// A task in a batch's answer: enough to follow it (by id, or by listing its run or scope)
/// without echoing a thousand requests back. `output` is there for a task that has one (a
/// result-cache hit, or an existing task that ended), unless the answer had no room for it:
/// then `omitted` names what was left out (docs/api.md, "Batches").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSummary<'a> {
    pub id: Uuid,
    pub run_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect_key: Option<&'a str>,
    pub status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<&'a Value>,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<&'static str>,
}

impl<'a> TaskSummary<'a> {
    /// The summary without its output (said in `omitted` when there was one).
    pub fn without_output(mut self) -> TaskSummary<'a> {
        if self.output.take().is_some() {
            self.omitted.push("output");
        }
        self
    }

    /// The summary without the keys the caller sent (its item's place in the answer says which
    /// they were), for an answer that has no room even for those.
    pub fn without_keys(mut self) -> TaskSummary<'a> {
        self.step_key = None;
        self.effect_key = None;
        self.omitted.extend(["stepKey", "effectKey"]);
        self
    }
}

impl<'a> From<&'a Task> for TaskSummary<'a> {
    fn from(task: &'a Task) -> TaskSummary<'a> {
        TaskSummary {
            id: task.id,
            run_id: task.run_id,
            step_key: Some(&task.step_key),
            effect_key: Some(&task.effect_key),
            status: task.status,
            output: task.output.as_ref(),
            created_at: task.created_at,
            omitted: Vec::new(),
        }
    }
}

/// The parts of a stored model reference a tenant may see.
fn public_model_ref(stored: &Value) -> Value {
    let mut public = serde_json::Map::new();
    for key in ["provider", "model"] {
        if let Some(value) = stored.get(key) {
            public.insert(key.to_owned(), value.clone());
        }
    }
    Value::Object(public)
}

/// A run as callers see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAnswer<'a> {
    pub id: Uuid,
    pub app_id: &'a str,
    pub scope_id: &'a str,
    pub state: RunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<&'a Value>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl<'a> From<&'a Run> for RunAnswer<'a> {
    fn from(run: &'a Run) -> RunAnswer<'a> {
        RunAnswer {
            id: run.id,
            app_id: &run.app_id,
            scope_id: &run.scope_id,
            state: run.state,
            actor: run.actor.as_ref(),
            cancel_requested_at: run.cancel_requested_at,
            created_at: run.created_at,
            updated_at: run.updated_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored_task() -> Task {
        let now = Utc::now();
        Task {
            id: Uuid::now_v7(),
            app_id: "app".into(),
            run_id: None,
            usage_subject: Some(json!({"type": "user", "id": "u1"})),
            usage_user_id: Some("u1".into()),
            scope_id: Some("scope".into()),
            source_id: Some("doc".into()),
            cache_key: Some("c".repeat(64)),
            step_key: "step".into(),
            effect_key: "effect".into(),
            kind: "classify".into(),
            request: json!({"kind": "classify"}),
            input_hash: "h".repeat(64),
            model_id: "default".into(),
            model_ref: Some(
                json!({"provider": "openai", "model": "m1", "baseUrl": "http://10.0.0.7:8080/v1"}),
            ),
            model_config_hash: Some("m".repeat(64)),
            status: TaskStatus::Succeeded,
            output: Some(json!("pos")),
            usage: Some(json!({"inputTokens": 1})),
            attempts: 1,
            max_attempts: 3,
            error_code: None,
            error_message: None,
            cancel_requested_at: None,
            heartbeat_at: Some(now),
            released_at: Some(now),
            created_at: now,
            started_at: Some(now),
            completed_at: Some(now),
            updated_at: now,
            trace_header: None,
            deferred_by: None,
            awaiting_batch: false,
            unheld_at: None,
            holds: Vec::new(),
            replay_of: None,
            replay_operation: None,
        }
    }

    #[test]
    fn the_task_body_has_the_documented_keys_and_nothing_the_store_keeps_for_itself() {
        let body = serde_json::to_value(TaskAnswer::from(&stored_task())).unwrap();
        let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut documented = vec![
            "id",
            "appId",
            "runId",
            "usageSubject",
            "usageUserId",
            "stepKey",
            "effectKey",
            "kind",
            "request",
            "inputHash",
            "modelId",
            "modelRef",
            "modelConfigHash",
            "status",
            "output",
            "usage",
            "attempts",
            "errorCode",
            "errorMessage",
            "cancelRequestedAt",
            "createdAt",
            "startedAt",
            "completedAt",
            "updatedAt",
        ];
        documented.sort_unstable();
        assert_eq!(keys, documented);
        assert_eq!(body["status"], "succeeded");
    }

    /// Where the provider lives is the operator's business, not the tenant's.
    #[test]
    fn the_model_reference_leaves_out_the_endpoint() {
        let body = serde_json::to_value(TaskAnswer::from(&stored_task())).unwrap();
        assert_eq!(body["modelRef"], json!({"provider": "openai", "model": "m1"}));
    }
}
