//! Looking a batch row up at the provider after a submit whose answer was lost (a timeout, a
//! batcher killed before its commit): the provider may have made the batch all the same, so a
//! batch row is never submitted again before this lookup says the provider has none of it.
//!
//! OpenAI and Bedrock find the batch by its key. Anthropic's lookup gives the batches that match
//! what was sent ([`aitasks_providers::Found::Matching`]); those already ours (another row's,
//! or an extra of one) are passed by. Each submit sent makes at most one batch, so when no more
//! match than this row sent submits, all of them are its own: the oldest is adopted and the
//! others are canceled there (recorded, to be deleted with it once they end). More than that
//! means another stack on the same key made one alike: nothing is adopted or canceled, and the
//! row waits (it is given back whole if it comes to its give-up time first).

use aitasks_providers::{Found, ModelProfile, ProviderError, Sent};
use aitasks_store::{self as store, OpenBatch, StoreError};

use super::BatchSummary;
use crate::app::App;

/// What the provider has of a batch row that sent submits before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Lookup {
    /// Nothing: sending it (again) makes none twice.
    Nothing,
    /// Its batch, to be recorded as submitted.
    Adopt(String),
    /// Batches that may be another stack's match too: why nothing was adopted.
    Unsure(String),
}

/// Look the batch up. `requests_now`: how many of its tasks are still in it (a batch made for it
/// holds between that many and its `records`).
pub(super) async fn look_up<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    batch: &OpenBatch,
    requests_now: usize,
    summary: &mut BatchSummary,
) -> Result<Result<Lookup, ProviderError>, StoreError> {
    let records = usize::try_from(batch.records).unwrap_or(0);
    let sent = Sent {
        since: batch.submit_sent_at.unwrap_or(batch.created_at),
        until: None,
        requests: requests_now.clamp(1, records.max(1))..=records.max(1),
    };
    let candidates = match app.batches.find(profile, batch.id, &sent).await {
        Ok(Found::Nothing) => return Ok(Ok(Lookup::Nothing)),
        Ok(Found::Keyed(id)) => return Ok(Ok(Lookup::Adopt(id))),
        Ok(Found::Matching(ids)) => ids,
        Err(error) => return Ok(Err(error)),
    };
    let known = store::known_provider_batches(client, &candidates).await?;
    let ours: Vec<String> = candidates.into_iter().filter(|id| !known.contains(id)).collect();
    let sent_submits = usize::try_from(batch.submits).unwrap_or(0);
    let Some((oldest, extras)) = ours.split_first() else { return Ok(Ok(Lookup::Nothing)) };
    if sent_submits == 0 {
        // Nothing was sent for this row: none of them is its own.
        return Ok(Ok(Lookup::Nothing));
    }
    // Another row of ours with a lost submit may have made one of these, not recorded yet: taking
    // it here would read its results against the wrong tasks (and cancel it as an extra).
    if store::other_rows_unsure(client, &batch.profile, batch.id, chrono::Utc::now()).await? {
        return Ok(Ok(Lookup::Unsure(
            "another batch row of this profile also waits on a submit of unknown outcome: none adopted"
                .into(),
        )));
    }
    if ours.len() > sent_submits {
        return Ok(Ok(Lookup::Unsure(format!(
            "{} batches at the provider match this one and it sent {sent_submits} submits: another stack on the same key made some; none adopted",
            ours.len()
        ))));
    }
    if !extras.is_empty() {
        store::add_extra_batches(client, batch.id, extras).await?;
        for extra in extras {
            match app.batches.cancel(profile, extra).await {
                Ok(()) => summary.batch_extras_canceled += 1,
                // Its clean-up cancels it again, and deletes it once it has ended.
                Err(error) => {
                    tracing::warn!(batch_id = %batch.id, provider_batch_id = %extra, error = %error, "could not cancel an extra batch made for this one")
                }
            }
        }
        tracing::warn!(batch_id = %batch.id, adopted = %oldest, extras = extras.len(), "more than one batch was made for a batch row: the oldest adopted, the others canceled");
    }
    Ok(Ok(Lookup::Adopt(oldest.clone())))
}
