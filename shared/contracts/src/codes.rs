//! The contract's vocabulary (docs/api.md, docs/lifecycle.md): task statuses, run states and
//! every error code, each spelled once, here. Everything else (the store's statements included,
//! which bind codes as parameters) uses these types.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a task is in its lifecycle: `queued → running → succeeded | failed | canceled`, plus
/// `queued → canceled` and `queued → failed`. A terminal task never changes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    Canceled,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Queued,
        TaskStatus::Running,
        TaskStatus::Succeeded,
        TaskStatus::Failed,
        TaskStatus::Canceled,
    ];

    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Succeeded | TaskStatus::Failed | TaskStatus::Canceled)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Queued => "queued",
            TaskStatus::Running => "running",
            TaskStatus::Succeeded => "succeeded",
            TaskStatus::Failed => "failed",
            TaskStatus::Canceled => "canceled",
        }
    }

    pub fn parse(text: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a run accepts new tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    Canceled,
}

impl RunState {
    pub const fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Canceled => "canceled",
        }
    }

    pub fn parse(text: &str) -> Option<RunState> {
        [RunState::Running, RunState::Canceled].into_iter().find(|s| s.as_str() == text)
    }
}

/// Every error code the contract names: the HTTP API's answers and a task's `errorCode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum ErrorCode {
    // HTTP answers (docs/api.md, "Errors").
    InvalidRequest,
    ModelUnknown,
    Unauthorized,
    NotFound,
    RunUnavailable,
    InputTooLarge,
    RateLimit,
    Capacity,
    SourceBudget,
    DailyBudget,
    TenantQuota,
    TaskCallbacks,
    TenantCallbacks,
    ReadRate,
    Internal,
    Unavailable,
    // Tasks (docs/api.md, "Task error codes"). ModelUnknown is both.
    Canceled,
    QueueTimeout,
    Interrupted,
    ProviderError,
    LoopFailed,
    RuntimeError,
    ProviderAuth,
    ModelRefused,
    OutputTruncated,
    OutputTooLarge,
    ModelConfigChanged,
    MethodNotAllowed,
    NotInBatch,
    IdempotencyKeyReused,
    // Holds (docs/api.md, "Holds").
    HoldsLimit,
    HoldIsAutomatic,
    // Replays and operations (docs/api.md, "Replaying a task" and "Operations").
    TaskNotEnded,
    TaskNotReplayable,
    OperationsLimit,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 35] = [
        ErrorCode::InvalidRequest,
        ErrorCode::ModelUnknown,
        ErrorCode::Unauthorized,
        ErrorCode::NotFound,
        ErrorCode::RunUnavailable,
        ErrorCode::InputTooLarge,
        ErrorCode::RateLimit,
        ErrorCode::Capacity,
        ErrorCode::SourceBudget,
        ErrorCode::DailyBudget,
        ErrorCode::TenantQuota,
        ErrorCode::TaskCallbacks,
        ErrorCode::TenantCallbacks,
        ErrorCode::ReadRate,
        ErrorCode::Internal,
        ErrorCode::Unavailable,
        ErrorCode::Canceled,
        ErrorCode::QueueTimeout,
        ErrorCode::Interrupted,
        ErrorCode::ProviderError,
        ErrorCode::LoopFailed,
        ErrorCode::RuntimeError,
        ErrorCode::ProviderAuth,
        ErrorCode::ModelRefused,
        ErrorCode::OutputTruncated,
        ErrorCode::OutputTooLarge,
        ErrorCode::ModelConfigChanged,
        ErrorCode::MethodNotAllowed,
        ErrorCode::NotInBatch,
        ErrorCode::IdempotencyKeyReused,
        // Holds.
        ErrorCode::HoldsLimit,
        ErrorCode::HoldIsAutomatic,
        // Replays and operations.
        ErrorCode::TaskNotEnded,
        ErrorCode::TaskNotReplayable,
        ErrorCode::OperationsLimit,
    ];

    /// The code as callers see it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::ModelUnknown => "AI_MODEL_UNKNOWN",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::RunUnavailable => "WORKFLOW_AI_RUN_UNAVAILABLE",
            ErrorCode::InputTooLarge => "AI_TASK_INPUT_TOO_LARGE",
            ErrorCode::RateLimit => "WORKFLOW_AI_RATE_LIMIT",
            ErrorCode::Capacity => "WORKFLOW_AI_CAPACITY",
            ErrorCode::SourceBudget => "WORKFLOW_AI_SOURCE_BUDGET",
            ErrorCode::DailyBudget => "WORKFLOW_AI_DAILY_BUDGET",
            ErrorCode::TenantQuota => "WORKFLOW_AI_TENANT_QUOTA",
            ErrorCode::TaskCallbacks => "WORKFLOW_AI_TASK_CALLBACKS",
            ErrorCode::TenantCallbacks => "WORKFLOW_AI_TENANT_CALLBACKS",
            ErrorCode::ReadRate => "WORKFLOW_AI_READ_RATE",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::Canceled => "WORKFLOW_AI_CANCELED",
            ErrorCode::QueueTimeout => "WORKFLOW_AI_QUEUE_TIMEOUT",
            ErrorCode::Interrupted => "WORKFLOW_AI_INTERRUPTED",
            ErrorCode::ProviderError => "WORKFLOW_AI_PROVIDER_ERROR",
            ErrorCode::LoopFailed => "WORKFLOW_AI_LOOP_FAILED",
            ErrorCode::RuntimeError => "WORKFLOW_AI_RUNTIME_ERROR",
            ErrorCode::ProviderAuth => "AI_PROVIDER_AUTH",
            ErrorCode::ModelRefused => "AI_MODEL_REFUSED",
            ErrorCode::OutputTruncated => "AI_OUTPUT_TRUNCATED",
            ErrorCode::OutputTooLarge => "AI_OUTPUT_TOO_LARGE",
            ErrorCode::ModelConfigChanged => "AI_MODEL_CONFIG_CHANGED",
            ErrorCode::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ErrorCode::NotInBatch => "NOT_IN_BATCH",
            ErrorCode::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            // Holds.
            ErrorCode::HoldsLimit => "WORKFLOW_AI_HOLDS_LIMIT",
            ErrorCode::HoldIsAutomatic => "HOLD_IS_AUTOMATIC",
            // Replays and operations.
            ErrorCode::TaskNotEnded => "TASK_NOT_ENDED",
            ErrorCode::TaskNotReplayable => "TASK_NOT_REPLAYABLE",
            ErrorCode::OperationsLimit => "WORKFLOW_AI_OPERATIONS_LIMIT",
        }
    }

    pub fn parse(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

impl From<ErrorCode> for &'static str {
    fn from(code: ErrorCode) -> &'static str {
        code.as_str()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_serializes_as_spelled() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        for status in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(status.as_str()), Some(status));
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
            assert_eq!(serde_json::from_value::<TaskStatus>(status.as_str().into()).unwrap(), status);
        }
        assert_eq!(RunState::parse("canceled"), Some(RunState::Canceled));
        assert_eq!(ErrorCode::parse("nope"), None);
    }
}
