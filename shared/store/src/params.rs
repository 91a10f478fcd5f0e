//! Values the statements bind, in the types they take: error codes as text, durations as
//! milliseconds, page sizes as `bigint`, error messages cut to the column's limit.

/// The codes some statements write, as the `text` parameters they bind.
pub(crate) const CANCELED_CODE: &str = aitasks_contracts::ErrorCode::Canceled.as_str();
pub(crate) const QUEUE_TIMEOUT_CODE: &str = aitasks_contracts::ErrorCode::QueueTimeout.as_str();
/// The message a canceled task keeps, whoever ends it.
pub(crate) const CANCELED_MESSAGE: &str = "The task was canceled.";

/// Error messages are stored truncated to the column's limit (characters, not bytes).
pub(crate) fn truncate_message(message: &str) -> String {
    message.chars().take(aitasks_contracts::ERROR_MESSAGE_MAX_CHARS).collect()
}

/// A duration as the `bigint` milliseconds the statements take.
pub(crate) fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A page size (the rows one statement takes) as the `bigint` a `LIMIT` takes.
pub(crate) fn limit(page: usize) -> i64 {
    i64::try_from(page).unwrap_or(i64::MAX)
}
