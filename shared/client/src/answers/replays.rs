//! A task's replays (`POST /v1/tasks/{id}/replay`, `GET /v1/tasks/{id}/replays`).

use aitasks_contracts::TaskStatus;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// One replay of a task, as `GET /v1/tasks/{id}/replays` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskReplay {
    pub id: Uuid,
    pub status: TaskStatus,
    pub effect_key: String,
    pub created_at: DateTime<Utc>,
    /// The operation that made it; `None` for a replay asked one task at a time.
    pub operation_id: Option<Uuid>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `GET /v1/tasks/{id}/replays`: the task's replays, oldest first, at most 100.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReplays {
    pub replays: Vec<TaskReplay>,
    /// More replays than listed.
    #[serde(default)]
    pub more: bool,
}

/// What a replay of one task asks (`POST /v1/tasks/{id}/replay`); the default asks nothing:
/// the derived effect key `replay:{taskId}`, the result cache as a create uses it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    /// The new task's effect key (1 to 500 characters) instead of the derived one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect_key: Option<String>,
    /// Skip the result cache: ask the provider again even for a request answered before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recompute: bool,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn a_replay_asking_nothing_sends_an_empty_object() {
        assert_eq!(serde_json::to_value(Replay::default()).unwrap(), json!({}));
        let asked = Replay { effect_key: Some("again".into()), recompute: true };
        assert_eq!(serde_json::to_value(asked).unwrap(), json!({"effectKey": "again", "recompute": true}));
    }
}
