//! Operations: cancel or replay the tasks a filter matches (`/v1/operations`). The answers are
//! the contract's ([`Operation`], [`aitasks_contracts::OperationPage`]); the body asked is this
//! crate's [`NewOperation`], which sends only what the caller narrowed.

use aitasks_contracts::{Kind, Operation, OperationAction, OperationState, TaskStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::answers::Outcome;

/// Which of the tenant's tasks an operation acts on, as asked; every field narrows. Neither
/// `run_id` nor `scope_id`: every task of the tenant. `status` left out: the action's default
/// (cancel: queued and running; replay: failed and canceled), which the answer's filter writes
/// out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewOperationFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Vec<TaskStatus>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Tasks created at or after this instant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_after: Option<DateTime<Utc>>,
    /// Tasks created before this instant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_before: Option<DateTime<Utc>>,
}

/// The body of `POST /v1/operations`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewOperation {
    pub action: OperationAction,
    pub filter: NewOperationFilter,
    /// Replay only: skip the result cache.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recompute: bool,
}

impl NewOperation {
    /// Cancel every task the filter matches.
    pub fn cancel(filter: NewOperationFilter) -> NewOperation {
        NewOperation { action: OperationAction::Cancel, filter, recompute: false }
    }

    /// Replay every task the filter matches.
    pub fn replay(filter: NewOperationFilter) -> NewOperation {
        NewOperation { action: OperationAction::Replay, filter, recompute: false }
    }
}

/// Whether an operation has ended (`done` or `stopped`): it never changes again.
pub fn is_ended(operation: &Operation) -> bool {
    operation.state != OperationState::Running
}

/// What `POST /v1/operations` answered: a new operation (202, [`Outcome::Created`]) or the one
/// its `Idempotency-Key` made before (200, [`Outcome::Existing`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationCreated {
    pub outcome: Outcome,
    pub operation: Operation,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn a_filter_sends_only_what_it_narrows() {
        let filter = NewOperationFilter {
            scope_id: Some("inbox".into()),
            status: Some(vec![TaskStatus::Failed]),
            kind: Some(Kind::ExtractData),
            created_after: Some("2026-01-31T11:00:00Z".parse().unwrap()),
            ..NewOperationFilter::default()
        };
        let body = serde_json::to_value(NewOperation::replay(filter)).unwrap();
        assert_eq!(
            body,
            json!({"action": "replay", "filter": {"scopeId": "inbox", "status": ["failed"],
                   "kind": "extract_data", "createdAfter": "2026-01-31T11:00:00Z"}})
        );
        let nothing = serde_json::to_value(NewOperation::cancel(NewOperationFilter::default())).unwrap();
        assert_eq!(
            nothing,
            json!({"action": "cancel", "filter": {}}),
            "the tenant's tasks, the default statuses"
        );
    }
}
