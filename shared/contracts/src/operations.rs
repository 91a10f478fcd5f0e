//! Replays and operations (docs/api.md, "Replaying a task" and "Operations"): the bodies of
//! `POST /v1/tasks/{taskId}/replay` and `POST /v1/operations`, the query of
//! `GET /v1/operations`, parsed strictly, and the answers the server writes and clients read.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::codes::TaskStatus;
use crate::fields::{string_value, Fields};
use crate::ids::EffectKey;
use crate::limits::{EFFECT_KEY_MAX_CHARS, ID_MAX_CHARS, MODEL_ID_MAX_CHARS};
use crate::problems::{Path, Problems};
use crate::request::Kind;

/// An error code a filter names is at most this long (every code is far shorter).
const ERROR_CODE_MAX_CHARS: usize = 100;

/// At most this many operations a page of `GET /v1/operations`.
pub const OPERATION_PAGE_MAX: usize = 100;

/// Why an operation passed over a task it matched (`skippedBecause`).
pub mod skip {
    /// cancel: the task had ended already.
    pub const ALREADY_ENDED: &str = "ALREADY_ENDED";
    /// replay: the task is queued or running.
    pub const NOT_ENDED: &str = "NOT_ENDED";
    /// replay: its derived key names a task that this operation did not make.
    pub const ALREADY_REPLAYED: &str = "ALREADY_REPLAYED";
    /// replay: a scoped task stored before replays were (its scope terms are unknown).
    pub const TASK_NOT_REPLAYABLE: &str = "TASK_NOT_REPLAYABLE";
}

/// The effect key of a replay asked without one: one replay of a task per key, so the same
/// replay asked twice (or an operation's page redone) is one task.
pub fn derived_replay_key(original: Uuid) -> EffectKey {
    // A UUID's text and the prefix fit the key's limit, without NUL.
    EffectKey::parse(&format!("replay:{original}")).unwrap_or_else(|| unreachable!("a valid key"))
}

/// `POST /v1/tasks/{taskId}/replay`'s body: empty, or these optional fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayTask {
    pub effect_key: Option<EffectKey>,
    pub recompute: bool,
}

impl ReplayTask {
    /// An empty body (or whitespace) asks for the defaults.
    pub fn parse(body: &[u8]) -> Result<ReplayTask, Problems> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(ReplayTask::default());
        }
        let value = crate::bodies::parse_json(body)?;
        let mut problems = Problems::new();
        let fields = Fields::object(&value, &Path::root(), &["effectKey", "recompute"], &mut problems)
            .ok_or_else(|| problems.clone())?;
        let effect_key = fields.value("effectKey").and_then(|value| {
            let path = fields.path("effectKey");
            let text = string_value(value, &path, 1, EFFECT_KEY_MAX_CHARS, &mut problems)?;
            let key = EffectKey::parse(&text);
            if key.is_none() {
                problems.add(&path, format!("must be 1 to {EFFECT_KEY_MAX_CHARS} characters without NUL"));
            }
            key
        });
        let recompute = fields.opt_boolean("recompute", &mut problems).unwrap_or(false);
        problems.into_result(ReplayTask { effect_key, recompute })
    }
}

/// What an operation does to each task it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationAction {
    Cancel,
    Replay,
}

impl OperationAction {
    pub const fn as_str(self) -> &'static str {
        match self {
            OperationAction::Cancel => "cancel",
            OperationAction::Replay => "replay",
        }
    }

    pub fn parse(text: &str) -> Option<OperationAction> {
        [OperationAction::Cancel, OperationAction::Replay].into_iter().find(|a| a.as_str() == text)
    }

    /// The statuses it matches when its filter names none.
    pub const fn default_statuses(self) -> &'static [TaskStatus] {
        match self {
            OperationAction::Cancel => &[TaskStatus::Queued, TaskStatus::Running],
            OperationAction::Replay => &[TaskStatus::Failed, TaskStatus::Canceled],
        }
    }
}

/// Where an operation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationState {
    Running,
    Stopped,
    Done,
}

impl OperationState {
    pub const fn as_str(self) -> &'static str {
        match self {
            OperationState::Running => "running",
            OperationState::Stopped => "stopped",
            OperationState::Done => "done",
        }
    }

    pub fn parse(text: &str) -> Option<OperationState> {
        [OperationState::Running, OperationState::Stopped, OperationState::Done]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// The tasks an operation acts on, as stored and answered (the default statuses written out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationFilter {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scope_id: Option<String>,
    pub status: Vec<TaskStatus>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kind: Option<Kind>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub created_after: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub created_before: Option<DateTime<Utc>>,
}

/// `POST /v1/operations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateOperation {
    pub action: OperationAction,
    pub filter: OperationFilter,
    pub recompute: bool,
}

impl CreateOperation {
    pub fn parse(body: &Value) -> Result<CreateOperation, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let fields = Fields::object(body, &root, &["action", "filter", "recompute"], &mut problems)
            .ok_or_else(|| problems.clone())?;
        let action = fields.string("action", 1, 20, &mut problems).and_then(|text| {
            let action = OperationAction::parse(&text);
            if action.is_none() {
                problems.add(&fields.path("action"), "must be one of cancel, replay");
            }
            action
        });
        let recompute = fields.opt_boolean("recompute", &mut problems);
        if recompute.is_some() && action == Some(OperationAction::Cancel) {
            problems.add(&fields.path("recompute"), "is taken only with the action replay");
        }
        let filter = fields
            .required("filter", &mut problems)
            .and_then(|value| parse_filter(value, &fields.path("filter"), action, &mut problems));
        match (action, filter) {
            (Some(action), Some(filter)) if problems.is_empty() => {
                Ok(CreateOperation { action, filter, recompute: recompute.unwrap_or(false) })
            }
            _ => Err(problems),
        }
    }
}

fn parse_filter(
    value: &Value,
    path: &Path,
    action: Option<OperationAction>,
    problems: &mut Problems,
) -> Option<OperationFilter> {
    let fields = Fields::object(
        value,
        path,
        &["runId", "scopeId", "status", "kind", "modelId", "errorCode", "createdAfter", "createdBefore"],
        problems,
    )?;
    let text = |key: &str, max: usize, problems: &mut Problems| {
        fields.value(key).and_then(|value| string_value(value, &fields.path(key), 1, max, problems))
    };
    let run_id = fields.value("runId").and_then(|value| {
        let id = value.as_str().and_then(|text| Uuid::parse_str(text).ok());
        if id.is_none() {
            problems.add(&fields.path("runId"), "must be a UUID");
        }
        id
    });
    let scope_id = text("scopeId", ID_MAX_CHARS, problems);
    if fields.has("runId") && fields.has("scopeId") {
        problems.add(&fields.path("scopeId"), "is not taken together with runId: at most one of them");
    }
    let status = match fields.value("status") {
        None => action.map(|action| action.default_statuses().to_vec()),
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= TaskStatus::ALL.len() => {
            let mut statuses = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item.as_str().and_then(TaskStatus::parse) {
                    Some(status) if !statuses.contains(&status) => statuses.push(status),
                    Some(_) => problems.add(&fields.path("status").index(i), "is given twice"),
                    None => problems.add(
                        &fields.path("status").index(i),
                        "must be one of queued, running, succeeded, failed, canceled",
                    ),
                }
            }
            Some(statuses)
        }
        Some(_) => {
            problems.add(&fields.path("status"), "must be a list of 1 to 5 distinct statuses");
            None
        }
    };
    let kind = fields.value("kind").and_then(|value| {
        let kind = value.as_str().and_then(Kind::parse);
        if kind.is_none() {
            problems.add(
                &fields.path("kind"),
                "must be one of generate_text, classify, classify_many, extract_data",
            );
        }
        kind
    });
    let model_id = text("modelId", MODEL_ID_MAX_CHARS, problems);
    let error_code = text("errorCode", ERROR_CODE_MAX_CHARS, problems);
    let instant = |key: &str, problems: &mut Problems| {
        fields.value(key).and_then(|value| {
            let at = value.as_str().and_then(|text| DateTime::parse_from_rfc3339(text).ok());
            if at.is_none() {
                problems
                    .add(&fields.path(key), "must be an RFC 3339 date-time, such as 2026-01-31T12:00:00Z");
            }
            at.map(|at| at.with_timezone(&Utc))
        })
    };
    let created_after = instant("createdAfter", problems);
    let created_before = instant("createdBefore", problems);
    Some(OperationFilter {
        run_id,
        scope_id,
        status: status?,
        kind,
        model_id,
        error_code,
        created_after,
        created_before,
    })
}

/// The raw query parameters of `GET /v1/operations`.
#[derive(Debug, Clone, Copy, Default)]
pub struct OperationsQuery<'a> {
    pub state: Option<&'a str>,
    pub after: Option<&'a str>,
    pub limit: Option<&'a str>,
}

/// A parsed `GET /v1/operations` query: keyset pages on the operation id (UUIDv7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOperations {
    pub state: Option<OperationState>,
    pub after: Option<Uuid>,
    pub limit: usize,
}

impl ListOperations {
    pub fn parse(query: OperationsQuery<'_>) -> Result<ListOperations, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let state = query.state.and_then(|text| {
            let state = OperationState::parse(text);
            if state.is_none() {
                problems.add(&root.key("state"), "must be one of running, stopped, done");
            }
            state
        });
        let after = query.after.and_then(|text| {
            let after = Uuid::parse_str(text).ok();
            if after.is_none() {
                problems.add(&root.key("after"), "must be an operation id (the page's next)");
            }
            after
        });
        let limit = match query.limit {
            None => OPERATION_PAGE_MAX,
            Some(text) => match text.parse::<usize>() {
                Ok(limit) if (1..=OPERATION_PAGE_MAX).contains(&limit) => limit,
                _ => {
                    problems.add(
                        &root.key("limit"),
                        format!("must be an integer from 1 to {OPERATION_PAGE_MAX}"),
                    );
                    OPERATION_PAGE_MAX
                }
            },
        };
        problems.into_result(ListOperations { state, after, limit })
    }
}

/// An operation as the API answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    pub id: Uuid,
    pub action: OperationAction,
    pub filter: OperationFilter,
    pub recompute: bool,
    pub state: OperationState,
    pub matched: i64,
    pub done: i64,
    pub skipped: i64,
    pub failed: i64,
    pub skipped_because: BTreeMap<String, i64>,
    pub failed_because: BTreeMap<String, i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

/// `GET /v1/operations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationPage {
    pub operations: Vec<Operation>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next: Option<Uuid>,
}

/// One replay of a task (`GET /v1/tasks/{taskId}/replays`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskReplay {
    pub id: Uuid,
    pub status: TaskStatus,
    pub effect_key: String,
    pub created_at: DateTime<Utc>,
    pub operation_id: Option<Uuid>,
}

/// `GET /v1/tasks/{taskId}/replays`: the oldest [`crate::HISTORY_ITEMS_MAX`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReplays {
    pub replays: Vec<TaskReplay>,
    pub more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(body: Value) -> Vec<String> {
        CreateOperation::parse(&body).unwrap_err().paths().into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn a_filter_is_read_strictly_with_its_defaults_written_out() {
        let cancel =
            CreateOperation::parse(&json!({"action": "cancel", "filter": {"scopeId": "s"}})).unwrap();
        assert_eq!(cancel.filter.status, [TaskStatus::Queued, TaskStatus::Running]);
        let replay =
            CreateOperation::parse(&json!({"action": "replay", "filter": {}, "recompute": true})).unwrap();
        assert_eq!(
            (replay.filter.status.as_slice(), replay.recompute),
            (&[TaskStatus::Failed, TaskStatus::Canceled][..], true)
        );
        assert_eq!(paths(json!({"action": "cancel", "filter": {}, "recompute": true})), ["recompute"]);
        assert_eq!(paths(json!({"action": "cancel", "filter": {"runId": "x"}})), ["filter.runId"]);
        assert_eq!(
            paths(json!({"action": "cancel", "filter": {"runId": Uuid::nil(), "scopeId": "s"}})),
            ["filter.scopeId"]
        );
        assert_eq!(paths(json!({"action": "cancel", "filter": {"status": ["done"]}})), ["filter.status[0]"]);
        assert_eq!(paths(json!({"action": "cancel", "filter": {"status": []}})), ["filter.status"]);
        assert_eq!(
            paths(json!({"action": "cancel", "filter": {"createdAfter": "yesterday"}})),
            ["filter.createdAfter"]
        );
        assert_eq!(paths(json!({"action": "pause", "filter": {}})), ["action"]);
        assert_eq!(paths(json!({"action": "cancel", "filter": {"colour": 1}})), ["filter.colour"]);
        assert_eq!(paths(json!({"action": "cancel"})), ["filter"]);
    }

    #[test]
    fn a_replay_body_is_empty_or_two_optional_fields() {
        assert_eq!(ReplayTask::parse(b"").unwrap(), ReplayTask::default());
        assert_eq!(ReplayTask::parse(b"{}").unwrap(), ReplayTask::default());
        let given = ReplayTask::parse(br#"{"effectKey": "again-1", "recompute": true}"#).unwrap();
        assert_eq!((given.effect_key.unwrap().as_str(), given.recompute), ("again-1", true));
        assert!(ReplayTask::parse(br#"{"effectKey": ""}"#).is_err());
        assert!(ReplayTask::parse(br#"{"callback": {}}"#).is_err());
        assert_eq!(derived_replay_key(Uuid::nil()).as_str(), "replay:00000000-0000-0000-0000-000000000000");
    }
}
