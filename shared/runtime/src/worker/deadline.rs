//! Time limits on the store: a worker answers its delivery before the invocation's deadline
//! whatever the database does.

use std::future::Future;
use std::time::Duration;

use aitasks_store::StoreError;

/// How long before the invocation's deadline a worker gives up on the store and answers.
pub(super) const ANSWER_MARGIN: Duration = Duration::from_millis(500);

/// How long before `ANSWER_MARGIN` a worker stops waiting for its claim: time enough to give
/// back what a late claim took.
pub(super) const CLAIM_MARGIN: Duration = Duration::from_secs(2);

/// An unavailable-store error for something that did not answer in time.
pub(super) fn timed_out(what: &str) -> StoreError {
    StoreError::Unavailable(Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} did not answer in time"),
    )))
}

/// `future`, or an unavailable-store error after `limit`.
pub(super) async fn within<T>(
    limit: Duration,
    future: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(limit, future).await.unwrap_or_else(|_| Err(timed_out("the database")))
}
