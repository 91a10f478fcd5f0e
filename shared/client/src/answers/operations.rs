//! Operations: cancel or replay the tasks a filter matches (`/v1/operations`).

use std::collections::BTreeMap;

use aitasks_contracts::{Kind, TaskStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::answers::Outcome;

/// What an operation does to each task its filter matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Cancel: a queued task ends `canceled`, a running one is asked to stop.
    Cancel,
    /// Replay: a new task of each (as [`crate::Client::replay`] makes one).
    Replay,
}

impl Action {
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Cancel => "cancel",
            Action::Replay => "replay",
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an operation is: `running` until it has gone through every task it matched (`done`) or
/// was stopped (`stopped`). An ended operation never changes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationState {
    Running,
    Stopped,
    Done,
}

impl OperationState {
    pub const ALL: [OperationState; 3] =
        [OperationState::Running, OperationState::Stopped, OperationState::Done];

    pub const fn as_str(self) -> &'static str {
        match self {
            OperationState::Running => "running",
            OperationState::Stopped => "stopped",
            OperationState::Done => "done",
        }
    }

    pub fn parse(text: &str) -> Option<OperationState> {
        OperationState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether the operation has ended (it never changes again).
    pub fn is_ended(self) -> bool {
        self != OperationState::Running
    }
}

impl std::fmt::Display for OperationState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of the tenant's tasks an operation acts on; every field narrows. Neither `run_id` nor
/// `scope_id`: every task of the tenant. `status` left out: the action's default (cancel:
/// queued and running; replay: failed and canceled).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Vec<TaskStatus>>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "kind_text")]
    pub kind: Option<Kind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Tasks created at or after this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_after: Option<DateTime<Utc>>,
    /// Tasks created before this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_before: Option<DateTime<Utc>>,
    /// Fields a newer server echoes that this client does not know (never sent: empty).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The body of `POST /v1/operations`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewOperation {
    pub action: Action,
    pub filter: OperationFilter,
    /// Replay only: skip the result cache.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recompute: bool,
}

impl NewOperation {
    /// Cancel every task the filter matches.
    pub fn cancel(filter: OperationFilter) -> NewOperation {
        NewOperation { action: Action::Cancel, filter, recompute: false }
    }

    /// Replay every task the filter matches.
    pub fn replay(filter: OperationFilter) -> NewOperation {
        NewOperation { action: Action::Replay, filter, recompute: false }
    }
}

/// An operation and its progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    pub id: Uuid,
    pub action: Action,
    pub filter: OperationFilter,
    #[serde(default)]
    pub recompute: bool,
    pub state: OperationState,
    /// Tasks the filter matched so far.
    pub matched: u64,
    /// Tasks acted on (cancel: canceled or asked to stop; replay: replayed).
    pub done: u64,
    /// Tasks left as they were, counted by why in `skipped_because`.
    pub skipped: u64,
    /// Tasks the action was refused for, counted by the refusal's code in `failed_because`.
    pub failed: u64,
    #[serde(default)]
    pub skipped_because: BTreeMap<String, u64>,
    #[serde(default)]
    pub failed_because: BTreeMap<String, u64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Operation {
    /// The counts a person follows: matched, done, skipped, failed.
    pub fn progress(&self) -> [u64; 4] {
        [self.matched, self.done, self.skipped, self.failed]
    }
}

/// What `POST /v1/operations` answered: a new operation (202, [`Outcome::Created`]) or the one
/// its `Idempotency-Key` made before (200, [`Outcome::Existing`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationCreated {
    pub outcome: Outcome,
    pub operation: Operation,
}

/// One page of `GET /v1/operations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationPage {
    pub operations: Vec<Operation>,
    /// Pass as `after` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Uuid>,
}

/// A listing of the tenant's operations, in creation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOperations {
    pub state: Option<OperationState>,
    pub after: Option<Uuid>,
    /// Operations per page (1..100).
    pub limit: usize,
}

impl Default for ListOperations {
    /// Every operation, from the first, full pages.
    fn default() -> ListOperations {
        ListOperations { state: None, after: None, limit: LIST_PAGE_MAX }
    }
}

/// The most a page of operations or holds holds.
pub const LIST_PAGE_MAX: usize = 100;

/// A [`Kind`] as its text (the contract's `Kind` is written, never read, by the API's side).
mod kind_text {
    use super::*;

    pub(super) fn serialize<S: Serializer>(kind: &Option<Kind>, out: S) -> Result<S::Ok, S::Error> {
        match kind {
            Some(kind) => out.serialize_str(kind.as_str()),
            None => out.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<Option<Kind>, D::Error> {
        let text = Option::<String>::deserialize(input)?;
        text.map(|text| {
            Kind::parse(&text).ok_or_else(|| serde::de::Error::custom(format!("unknown kind {text:?}")))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn a_filter_sends_only_what_it_narrows_and_reads_back_what_the_api_echoes() {
        let filter = OperationFilter {
            scope_id: Some("inbox".into()),
            status: Some(vec![TaskStatus::Failed]),
            kind: Some(Kind::ExtractData),
            created_after: Some("2026-01-31T11:00:00Z".parse().unwrap()),
            ..OperationFilter::default()
        };
        let body = serde_json::to_value(NewOperation::replay(filter.clone())).unwrap();
        assert_eq!(
            body,
            json!({"action": "replay", "filter": {"scopeId": "inbox", "status": ["failed"],
                   "kind": "extract_data", "createdAfter": "2026-01-31T11:00:00Z"}})
        );
        let back: OperationFilter = serde_json::from_value(body["filter"].clone()).unwrap();
        assert_eq!(back, filter);
        let unknown = serde_json::from_value::<OperationFilter>(json!({"kind": "summarize"}));
        assert!(unknown.is_err(), "a kind the contract does not name is not read as another");
    }
}
