//! The successes that end together, written together: the worker's group commit of one
//! invocation's successes and a page of a provider batch's answers both come here.

use aitasks_providers::Completion;
use aitasks_store::{self as store, Fenced, Lease, PendingEvent, StoreError};
use serde_json::Value;

/// One success to store: its lease, its checked output, its usage ([`stored_usage`]).
pub(crate) type Success<'a> = (Lease, &'a Value, Option<&'a Value>);

/// A completion's usage as the task stores it.
pub(crate) fn stored_usage(completion: &Completion) -> Option<Value> {
    serde_json::to_value(&completion.usage).ok()
}

/// Complete attempts that finished together, answered item by item in order: those the group
/// statement takes in one statement (`store::complete_many`), each that completes alone
/// ([`Lease::completes_alone`]) in its own. If the group's statement fails while the store is
/// there (a row it refuses, a deadlock), each is completed alone, so one row's failure never
/// costs another task its attempt; while the store is away, every item is that error.
/// `hand_over`: the caller publishes the events right after and has each task's SQS message to
/// fall back on (process-task; [`store::Custody::HandedOver`]); the batcher has none, so its
/// events are the outbox's.
pub(crate) async fn complete_together(
    client: &store::Client,
    successes: &[Success<'_>],
    hand_over: bool,
) -> Vec<Result<Fenced<PendingEvent>, StoreError>> {
    let error = match store::complete_many(client, successes, hand_over).await {
        Ok(results) => {
            let mut results: Vec<_> = results.into_iter().map(Ok).collect();
            for (slot, (lease, output, usage)) in results.iter_mut().zip(successes) {
                if lease.completes_alone() {
                    *slot = store::complete_attempt(client, *lease, output, *usage, hand_over).await;
                }
            }
            return results;
        }
        Err(error) if error.is_unavailable() => {
            let text = crate::error_chain(&error);
            return successes.iter().map(|_| Err(StoreError::Unavailable(text.clone().into()))).collect();
        }
        Err(error) => error,
    };
    if successes.len() == 1 {
        return vec![Err(error)];
    }
    tracing::warn!(
        attempts = successes.len(),
        error = %crate::error_chain(&error),
        "the group's statement failed; completing its successes one by one"
    );
    let mut results = Vec::with_capacity(successes.len());
    for (lease, output, usage) in successes {
        results.push(store::complete_attempt(client, *lease, output, *usage, hand_over).await);
    }
    results
}
