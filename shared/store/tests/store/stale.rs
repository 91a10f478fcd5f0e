//! The sweeper's expiry of stale running attempts as these tests drive it: the store reads the
//! page and writes what it is given; what to give is the runtime's rule (settle::decision), here
//! written out in its plain form (no backoff: the store does not see one).

use std::time::Duration;

use aitasks_contracts::ErrorCode;
use aitasks_store::{self as store, ExpiredRunning, GenericClient, StaleEnding};

/// Read up to `page` stale attempts (heartbeat older than `stale_after`, or a batch lease passed)
/// and write their endings: canceled where a cancel was requested, requeued while attempts
/// remain, else failed, both `WORKFLOW_AI_INTERRUPTED`.
pub(crate) async fn expire_stale(
    client: &impl GenericClient,
    stale_after: Duration,
    page: usize,
) -> ExpiredRunning {
    let stale = store::take_stale_running(client, stale_after, page).await.unwrap();
    let decided: Vec<_> = stale
        .iter()
        .map(|attempt| {
            let (code, message) =
                (ErrorCode::Interrupted, "The worker stopped sending heartbeats.".to_owned());
            let ending = if attempt.cancel_requested {
                StaleEnding::Canceled
            } else if attempt.lease.attempt < attempt.max_attempts {
                StaleEnding::Requeue { code, message }
            } else {
                StaleEnding::Fail { code, message }
            };
            (attempt.lease, ending)
        })
        .collect();
    store::expire_running(client, stale_after, &decided).await.unwrap()
}
