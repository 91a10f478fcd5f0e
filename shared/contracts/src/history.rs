//! The read API for history (docs/api.md, "History"): the query of `GET /v1/runs`, parsed
//! strictly, and the answers of the history routes, shared by the server (which writes them) and
//! the client crate (which reads them). A task's attempts are in `attempts`, the tenant's summary
//! in `summary`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::codes::RunState;
use crate::limits::{ID_MAX_CHARS, RUN_PAGE_MAX};
use crate::problems::{Path, Problems};

/// The raw query parameters of `GET /v1/runs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunsQuery<'a> {
    pub status: Option<&'a str>,
    pub scope_id: Option<&'a str>,
    pub created_after: Option<&'a str>,
    pub created_before: Option<&'a str>,
    pub after: Option<&'a str>,
    pub limit: Option<&'a str>,
}

/// A parsed `GET /v1/runs` query. Pages are keyset pages on the run id (UUIDv7: creation order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRuns {
    pub status: Option<RunState>,
    /// Only the runs of this scope.
    pub scope_id: Option<String>,
    /// Runs created at or after this instant.
    pub created_after: Option<DateTime<Utc>>,
    /// Runs created before this instant.
    pub created_before: Option<DateTime<Utc>>,
    /// The `next` of the previous page: runs after this id.
    pub after: Option<Uuid>,
    pub limit: usize,
}

/// An RFC 3339 query parameter, or a problem naming it.
pub(crate) fn instant(problems: &mut Problems, name: &str, text: Option<&str>) -> Option<DateTime<Utc>> {
    let text = text?;
    match DateTime::parse_from_rfc3339(text) {
        Ok(at) => Some(at.with_timezone(&Utc)),
        Err(_) => {
            problems
                .add(&Path::root().key(name), "must be an RFC 3339 date-time, such as 2026-01-31T12:00:00Z");
            None
        }
    }
}

/// A `scopeId` query parameter (1 to [`ID_MAX_CHARS`] characters, no NUL), or a problem naming
/// it.
pub(crate) fn scope_param(problems: &mut Problems, text: Option<&str>) -> Option<String> {
    let text = text?;
    let length = text.chars().count();
    if length == 0 || length > ID_MAX_CHARS || text.contains('\0') {
        problems
            .add(&Path::root().key("scopeId"), format!("must be 1 to {ID_MAX_CHARS} characters without NUL"));
        None
    } else {
        Some(text.to_owned())
    }
}

impl ListRuns {
    pub fn parse(query: RunsQuery<'_>) -> Result<ListRuns, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let status = query.status.and_then(|text| {
            let state = RunState::parse(text);
            if state.is_none() {
                problems.add(&root.key("status"), "must be one of running, canceled");
            }
            state
        });
        let scope_id = scope_param(&mut problems, query.scope_id);
        let created_after = instant(&mut problems, "createdAfter", query.created_after);
        let created_before = instant(&mut problems, "createdBefore", query.created_before);
        let after = query.after.and_then(|text| {
            let after = Uuid::parse_str(text).ok();
            if after.is_none() {
                problems.add(&root.key("after"), "must be a run id (the page's next)");
            }
            after
        });
        let limit = match query.limit {
            None => Some(RUN_PAGE_MAX),
            Some(text) => match text.parse::<usize>() {
                Ok(limit) if (1..=RUN_PAGE_MAX).contains(&limit) => Some(limit),
                _ => {
                    problems.add(&root.key("limit"), format!("must be an integer from 1 to {RUN_PAGE_MAX}"));
                    None
                }
            },
        };
        match limit {
            Some(limit) if problems.is_empty() => {
                Ok(ListRuns { status, scope_id, created_after, created_before, after, limit })
            }
            _ => Err(problems),
        }
    }
}

/// A run's tasks by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCounts {
    pub queued: u64,
    pub running: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub canceled: u64,
    /// The run has more than [`crate::limits::RUN_TASKS_COUNTED_MAX`] tasks: the counts are of
    /// its first ones (in creation order), so that a page of runs stays bounded.
    #[serde(default)]
    pub more: bool,
}

/// A run in `GET /v1/runs`: the run as `GET /v1/runs/{runId}` answers it, and its task counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedRun {
    pub id: Uuid,
    pub app_id: String,
    pub scope_id: String,
    pub state: RunState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<serde_json::Value>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub tasks: TaskCounts,
}

/// `GET /v1/runs/{runId}/progress`: how far along a run is, its tasks counted by status now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunProgress {
    pub run_id: Uuid,
    pub state: RunState,
    pub queued: u64,
    pub running: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub canceled: u64,
    /// The tasks counted: the sum of the five.
    pub total: u64,
    /// False when the run has more than [`crate::limits::RUN_PROGRESS_COUNTED_MAX`] tasks: the
    /// counts are then of its first ones (in creation order).
    pub complete: bool,
}

impl RunProgress {
    /// Tasks that ended: succeeded, failed or canceled.
    pub fn done(&self) -> u64 {
        self.succeeded + self.failed + self.canceled
    }
}

/// `GET /v1/runs`: a page of runs, and where the next page starts (absent on the last page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunPage {
    pub runs: Vec<ListedRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Uuid>,
}

/// A completion event of a task (the outbox row behind EventBridge's `task.settled`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEvent {
    /// The event's type, `task.settled`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The task's status the event announces.
    pub status: String,
    pub created_at: DateTime<Utc>,
    /// When the bus accepted it; `null` while it is still owed.
    pub delivered_at: Option<DateTime<Utc>>,
}

/// `GET /v1/tasks/{taskId}/events`: the oldest [`crate::limits::HISTORY_ITEMS_MAX`] of them; `more` when
/// there are others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEvents {
    pub events: Vec<TaskEvent>,
    pub more: bool,
}

/// A callback of a task: never its token, nor anything derived from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCallback {
    /// `step_functions` or `lambda_durable`.
    pub kind: String,
    /// `waiting`, `owed`, `delivered`, `gone` or `refused`.
    pub state: String,
    pub attached_at: DateTime<Utc>,
    /// While waiting: the last heartbeat sent (its attach, at first).
    pub heartbeat_at: DateTime<Utc>,
    /// While owed: when the next success or failure call may start.
    pub due_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    /// Success or failure calls started.
    pub tries: u32,
}

/// `GET /v1/tasks/{taskId}/callbacks`: the oldest [`crate::limits::HISTORY_ITEMS_MAX`]; `more` when there
/// are others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCallbacks {
    pub callbacks: Vec<TaskCallback>,
    pub more: bool,
}

/// `GET /v1/tasks/{taskId}/batch`: the provider batch a deferred task was sent in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskBatch {
    pub id: Uuid,
    /// `openai`, `anthropic` or `bedrock`.
    pub provider: String,
    /// The provider's id of the batch; `null` until the provider has accepted it.
    pub provider_batch_id: Option<String>,
    /// `submitting`, `submitted` or `ended`.
    pub status: String,
    /// How it ended: `completed`, `failed`, `expired`, `canceled`, `given_up`, `unsubmitted`.
    pub outcome: Option<String>,
    /// The tenant's own requests in the batch (never another tenant's), and those still waiting for its
    /// result.
    pub requests: u32,
    pub pending: u64,
    pub created_at: DateTime<Utc>,
    pub submitted_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(query: RunsQuery<'_>) -> Vec<String> {
        ListRuns::parse(query).unwrap_err().paths().into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn a_known_status_rfc3339_times_a_run_id_and_a_bounded_limit() {
        let listed = ListRuns::parse(RunsQuery::default()).unwrap();
        assert_eq!((listed.status, listed.limit, listed.after), (None, RUN_PAGE_MAX, None));
        let run = Uuid::now_v7();
        let listed = ListRuns::parse(RunsQuery {
            status: Some("canceled"),
            scope_id: Some("inbox"),
            created_after: Some("2026-01-31T12:00:00+01:00"),
            created_before: Some("2026-02-01T00:00:00Z"),
            after: Some(&run.to_string()),
            limit: Some("7"),
        })
        .unwrap();
        assert_eq!(listed.status, Some(RunState::Canceled));
        assert_eq!(listed.scope_id.as_deref(), Some("inbox"));
        assert_eq!(listed.created_after.unwrap().to_rfc3339(), "2026-01-31T11:00:00+00:00");
        assert_eq!((listed.after, listed.limit), (Some(run), 7));
        let bad = RunsQuery {
            status: Some("done"),
            scope_id: Some(""),
            created_after: Some("yesterday"),
            created_before: Some("2026-02-01"),
            after: Some("1"),
            limit: Some("0"),
        };
        assert_eq!(paths(bad), ["status", "scopeId", "createdAfter", "createdBefore", "after", "limit"]);
        assert_eq!(paths(RunsQuery { limit: Some("101"), ..Default::default() }), ["limit"]);
    }
}
