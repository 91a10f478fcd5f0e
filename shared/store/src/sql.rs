//! Small helpers the operations share. The statements themselves are in `sql/` (see
//! [`crate::queries`]).

/// The codes some statements write, as the `text` parameters they bind.
pub(crate) const CANCELED_CODE: &str = aitasks_contracts::ErrorCode::Canceled.as_str();
pub(crate) const QUEUE_TIMEOUT_CODE: &str = aitasks_contracts::ErrorCode::QueueTimeout.as_str();
pub(crate) const INTERRUPTED_CODE: &str = aitasks_contracts::ErrorCode::Interrupted.as_str();

/// Error messages are stored truncated to the column's limit (characters, not bytes).
pub(crate) fn truncate_message(message: &str) -> String {
    message.chars().take(crate::ERROR_MESSAGE_MAX_CHARS).collect()
}

/// Split settled rows into the terminal ones (with their event) and the rest.
pub(crate) fn split_settled(
    rows: &[tokio_postgres::Row],
) -> crate::StoreResult<(Vec<crate::Settled>, Vec<crate::Task>)> {
    let mut settled = Vec::new();
    let mut other = Vec::new();
    for row in rows {
        if row.try_get::<_, Option<i64>>("event_id")?.is_some() {
            settled.push(crate::model::settled_from_row(row)?);
        } else {
            other.push(crate::Task::from_row(row)?);
        }
    }
    Ok((settled, other))
}

/// A duration as the `bigint` milliseconds the statements take.
pub(crate) fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A batch size as the `bigint` a `LIMIT` takes.
pub(crate) fn limit(batch: usize) -> i64 {
    i64::try_from(batch).unwrap_or(i64::MAX)
}
