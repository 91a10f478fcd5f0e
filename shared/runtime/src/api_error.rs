//! What an API call can answer besides success. Mapped to HTTP once, in lambda-kit.

use std::time::Duration;

use aitasks_contracts::{ErrorCode, IdempotencyKey, Problems, IDEMPOTENCY_KEY_MAX_CHARS};
use aitasks_store::StoreError;

/// A refused or failed API call (docs/api.md, the error table).
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("missing or invalid token")]
    Unauthorized,
    #[error("invalid request: {0}")]
    Invalid(Problems),
    #[error("the request is larger than 100000 bytes as stored")]
    TooLarge,
    #[error("no model profile named {0:?}")]
    ModelUnknown(String),
    #[error("not found")]
    NotFound,
    /// `GET /v1/tasks/{taskId}/batch` of a task that was sent in no provider batch.
    #[error(
        "the task is in no provider batch: it was not deferred, waits for one still, or its batch was pruned"
    )]
    NotInBatch,
    /// No route matches the method and path (answered like API Gateway would: 404).
    #[error("no such route")]
    NoRoute,
    /// A known path with a method it does not take: 405 with `Allow`.
    #[error("this path takes {}", allow.join(", "))]
    MethodNotAllowed { allow: &'static [&'static str] },
    #[error("the run is canceled")]
    RunUnavailable,
    /// `POST /v1/runs` whose `Idempotency-Key` names a run the tenant created with another body.
    #[error("the Idempotency-Key names a run created with another body: a new run needs a new key")]
    IdempotencyKeyReused,
    #[error("admission refused: {code}")]
    Admission { code: ErrorCode, retry_after: Option<Duration> },
    /// The tenant's reads are over their rate (docs/api.md, "Read rate").
    #[error("the tenant's reads are over their rate (AITASK_READ_RATE): retry after Retry-After")]
    ReadRate { retry_after: Duration },
    /// The create's callback would pass a limit on callbacks (docs/api.md, "Callbacks").
    #[error("{}", callback_limit_message(*code, *limit))]
    CallbackLimit { code: ErrorCode, limit: i64 },
    // Holds (docs/api.md, "Holds").
    /// `POST /v1/holds` past `AITASK_HOLDS_PER_TENANT` active holds.
    #[error("the tenant has {0} active holds already (AITASK_HOLDS_PER_TENANT): release one first")]
    HoldsLimit(usize),
    /// `POST /v1/holds/{holdId}/release` of an automatic hold: its probe releases it.
    #[error("the hold is automatic: it is released by its probe once the provider answers again")]
    HoldIsAutomatic,
    // Replays and operations (docs/api.md, "Replaying a task" and "Operations").
    /// A replay of a task that is queued or running.
    #[error("the task has not ended: only a succeeded, failed or canceled task is replayed")]
    TaskNotEnded,
    /// A replay of a scoped task stored before replays were: its scope terms are unknown.
    #[error("the task was created before replays were, with a scope whose terms were not kept: create it again instead")]
    TaskNotReplayable,
    /// The tenant has its limit of running operations (`AITASK_OPERATIONS_PER_TENANT`).
    #[error("the tenant has {limit} operations running already (AITASK_OPERATIONS_PER_TENANT): stop one or wait for one to end")]
    OperationsLimit { limit: i64 },
    #[error("the database is unavailable")]
    Unavailable(#[source] StoreError),
    /// Anything unexpected: the cause (its whole chain) goes to the log, the caller sees an
    /// opaque 500.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// An `Idempotency-Key` header (`POST /v1/runs`, `POST /v1/operations`), or the 400 that
    /// names it.
    pub(crate) fn idempotency_key(header: Option<&[u8]>) -> Result<Option<IdempotencyKey>, ApiError> {
        header
            .map(|value| {
                IdempotencyKey::parse(value).ok_or_else(|| {
                    ApiError::invalid(
                        "Idempotency-Key",
                        &format!(
                            "must be 1 to {IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters, without spaces"
                        ),
                    )
                })
            })
            .transpose()
    }

    pub fn status(&self) -> u16 {
        match self {
            ApiError::Unauthorized => 401,
            ApiError::Invalid(_) | ApiError::ModelUnknown(_) => 400,
            ApiError::TooLarge => 413,
            ApiError::NotFound | ApiError::NoRoute | ApiError::NotInBatch => 404,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::RunUnavailable | ApiError::HoldIsAutomatic => 409,
            ApiError::TaskNotEnded | ApiError::TaskNotReplayable => 409,
            ApiError::OperationsLimit { .. } => 429,
            ApiError::IdempotencyKeyReused => 422,
            ApiError::Admission { .. }
            | ApiError::CallbackLimit { .. }
            | ApiError::ReadRate { .. }
            | ApiError::HoldsLimit(_) => 429,
            ApiError::Unavailable(_) => 503,
            ApiError::Internal(_) => 500,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Unauthorized => ErrorCode::Unauthorized,
            ApiError::Invalid(_) => ErrorCode::InvalidRequest,
            ApiError::TooLarge => ErrorCode::InputTooLarge,
            ApiError::ModelUnknown(_) => ErrorCode::ModelUnknown,
            ApiError::NotFound | ApiError::NoRoute => ErrorCode::NotFound,
            ApiError::NotInBatch => ErrorCode::NotInBatch,
            ApiError::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            ApiError::RunUnavailable => ErrorCode::RunUnavailable,
            ApiError::IdempotencyKeyReused => ErrorCode::IdempotencyKeyReused,
            ApiError::Admission { code, .. } | ApiError::CallbackLimit { code, .. } => *code,
            ApiError::ReadRate { .. } => ErrorCode::ReadRate,
            ApiError::HoldsLimit(_) => ErrorCode::HoldsLimit,
            ApiError::HoldIsAutomatic => ErrorCode::HoldIsAutomatic,
            ApiError::TaskNotEnded => ErrorCode::TaskNotEnded,
            ApiError::TaskNotReplayable => ErrorCode::TaskNotReplayable,
            ApiError::OperationsLimit { .. } => ErrorCode::OperationsLimit,
            ApiError::Unavailable(_) => ErrorCode::Unavailable,
            ApiError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The message callers see. Internal causes stay in the log.
    pub fn public_message(&self) -> String {
        match self {
            ApiError::Internal(_) => "internal error".to_owned(),
            ApiError::Unavailable(_) => "the database is unavailable".to_owned(),
            ApiError::Invalid(_) => "the request is invalid".to_owned(),
            other => other.to_string(),
        }
    }

    pub fn invalid(path: &str, message: &str) -> ApiError {
        ApiError::Invalid(Problems::one(&aitasks_contracts::Path::root().key(path), message))
    }
}

fn callback_limit_message(code: ErrorCode, limit: i64) -> String {
    match code {
        ErrorCode::TaskCallbacks => format!(
            "the task has {limit} callbacks already, waiting or being answered (AITASK_CALLBACKS_PER_TASK): read it without one, or attach yours once those are answered"
        ),
        _ => format!(
            "the tenant has {limit} callbacks waiting already (AITASK_TENANT_WAITING_CALLBACKS): retry once some of its tasks have ended"
        ),
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::RunNotFound => ApiError::NotFound,
            StoreError::RunUnavailable => ApiError::RunUnavailable,
            StoreError::RequestTooLarge => ApiError::TooLarge,
            unavailable @ StoreError::Unavailable(_) => ApiError::Unavailable(unavailable),
            StoreError::Admission(refusal) => {
                ApiError::Admission { code: refusal.code(), retry_after: refusal.retry_after() }
            }
            other => ApiError::Internal(Box::new(other)),
        }
    }
}
