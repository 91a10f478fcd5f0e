//! `GET /v1/tasks/{taskId}/attempts` (docs/api.md, "History"): each counted attempt of a task,
//! oldest first, as the database recorded it when the attempt ended (migrations/V38), and the
//! attempt running now, if any.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How an attempt ended: the state it left the task in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Still running (the task's current attempt; `endedAt` is `null`).
    Running,
    /// It stored the task's output.
    Succeeded,
    /// It ended the task failed (a non-retryable error, the budget spent, or its worker lost
    /// with no attempt left).
    Failed,
    /// It failed with a retryable error (its worker lost included) and the task went back to the
    /// queue for another attempt.
    Retried,
    /// A cancel ended it.
    Canceled,
}

impl AttemptOutcome {
    pub const ALL: [AttemptOutcome; 5] = [
        AttemptOutcome::Running,
        AttemptOutcome::Succeeded,
        AttemptOutcome::Failed,
        AttemptOutcome::Retried,
        AttemptOutcome::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Running => "running",
            AttemptOutcome::Succeeded => "succeeded",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Retried => "retried",
            AttemptOutcome::Canceled => "canceled",
        }
    }

    pub fn parse(text: &str) -> Option<AttemptOutcome> {
        AttemptOutcome::ALL.into_iter().find(|outcome| outcome.as_str() == text)
    }
}

/// The tokens an attempt's provider calls used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One attempt of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAttempt {
    /// Its number, from 1 (the task's `attempts` counts them).
    pub attempt: u32,
    pub started_at: DateTime<Utc>,
    /// `null` while it runs.
    pub ended_at: Option<DateTime<Utc>>,
    pub outcome: AttemptOutcome,
    /// The model profile that answered (the task's own or a fallback), when known: an attempt
    /// that stored an output.
    pub profile: Option<String>,
    /// The model that answered as its provider named it, when known.
    pub model_id: Option<String>,
    pub error_code: Option<String>,
    /// At most 2,000 characters, as the task's own.
    pub error_message: Option<String>,
    pub usage: Option<AttemptUsage>,
    pub estimated_cost_usd: Option<f64>,
}

/// `GET /v1/tasks/{taskId}/attempts`: the oldest [`crate::limits::HISTORY_ITEMS_MAX`]; `more`
/// when there are others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAttempts {
    pub attempts: Vec<TaskAttempt>,
    pub more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_back_as_written() {
        for outcome in AttemptOutcome::ALL {
            assert_eq!(AttemptOutcome::parse(outcome.as_str()), Some(outcome));
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.as_str());
        }
        assert_eq!(AttemptOutcome::parse("expired"), None);
    }
}
