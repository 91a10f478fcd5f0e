//! Deleting what the provider holds of a batch once it has ended (its tasks settled or sent
//! on-demand): OpenAI's input, output and error files, Anthropic's message batch and any extra
//! batches made for the row ([`aitasks_providers::BatchClient::clean_up`]). A batch the provider
//! is still finishing (a cancel under way) is tried again later, backing off from
//! [`FIRST_RETRY`] to an hour; after [`MAX_CLEANUP_TRIES`] (about a day) it is given up with a
//! warning. Bounded: pages of the sweep's page size, for up to [`CLEANUP_WORK`].
//!
//! A row that sent more than one submit may have made a batch that its lookup did not see yet
//! (a provider's list lags): its first clean-up looks again ([`late_extras`]) and takes what it
//! finds as extras, under the lookup's rule (never more than the submits could have made).

use std::time::{Duration, Instant};

use aitasks_providers::{Cleanup, Found, ModelProfile, Sent};
use aitasks_store::{self as store, BatchLeftovers, StoreError};

use super::BatchSummary;
use crate::app::App;

/// A clean-up taken is hidden from other sweepers this long (far longer than [`CLEANUP_LIMIT`]).
const CLEANUP_LEASE: Duration = Duration::from_secs(300);
/// The most one batch's clean-up may take, its provider calls together (and as much again for
/// the look for extras at its first clean-up).
const CLEANUP_LIMIT: Duration = Duration::from_secs(20);
/// No new batch's clean-up starts after this long: the duty ends within this plus one batch's
/// limits (50 s at most), however many batches are due (a deploy makes every ended one due).
const CLEANUP_WORK: Duration = Duration::from_secs(10);
/// Batches taken a statement: the ones a sweep takes but does not reach wait out the lease.
const CLEANUP_PAGE: usize = 10;
/// How long after the provider's answer was recorded a batch made by an earlier submit may
/// still be dated: a submit's call gives up after this long.
const SUBMIT_CALL: Duration = Duration::from_secs(30);
/// The first wait before a clean-up is tried again, doubling up to an hour.
const FIRST_RETRY: Duration = Duration::from_secs(30);
/// Clean-ups tried before one is given up (30 s doubling to an hour: about a day).
pub const MAX_CLEANUP_TRIES: i32 = 30;

/// Clean up the ended batches that are due, a page at a time.
pub async fn clean_up_batches<P>(
    app: &App<P>,
    page: usize,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let client = store::client(&app.pool).await?;
    let started = Instant::now();
    let page = page.clamp(1, CLEANUP_PAGE);
    'pages: while started.elapsed() < CLEANUP_WORK {
        let due = store::take_batch_leftovers(&client, CLEANUP_LEASE, page).await?;
        for batch in &due {
            if started.elapsed() >= CLEANUP_WORK {
                break 'pages;
            }
            clean_up(app, &client, batch, summary).await?;
        }
        if due.len() < page {
            break;
        }
    }
    Ok(())
}

fn retry_delay(tries: i32) -> Duration {
    (FIRST_RETRY * 2u32.pow(tries.clamp(1, 8) as u32 - 1)).min(Duration::from_secs(3600))
}

async fn clean_up<P>(
    app: &App<P>,
    client: &store::Client,
    batch: &BatchLeftovers,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let Ok(profile) = app.profiles.resolve(&batch.profile) else {
        tracing::warn!(batch_id = %batch.id, profile = %batch.profile, "the batch's profile is no longer configured: its copies at the provider are left there");
        let why = "clean-up given up: the batch's profile is no longer configured";
        return store::next_batch_cleanup(client, batch.id, None, Some(why)).await;
    };
    let mut late = Vec::new();
    if batch.tries == 1 && batch.submits > 1 {
        late = match tokio::time::timeout(CLEANUP_LIMIT, late_extras(app, client, profile, batch)).await {
            Ok(found) => found?,
            Err(_) => {
                tracing::warn!(batch_id = %batch.id, "the look for extra batches made for this one took too long");
                Vec::new()
            }
        };
    }
    let ids: Vec<&String> =
        batch.provider_batch_id.iter().chain(&batch.extra_batch_ids).chain(&late).collect();
    let all = async {
        let mut left = false;
        for id in ids {
            left |= app.batches.clean_up(profile, id).await? == Cleanup::NotYet;
        }
        Ok::<bool, aitasks_providers::ProviderError>(left)
    };
    let error = match tokio::time::timeout(CLEANUP_LIMIT, all).await {
        Ok(Ok(false)) => {
            summary.batches_cleaned += 1;
            return store::next_batch_cleanup(client, batch.id, None, None).await;
        }
        Ok(Ok(true)) => None,
        Ok(Err(error)) => Some(error.to_string()),
        Err(_) => Some(format!("the clean-up took over {CLEANUP_LIMIT:?}")),
    };
    if batch.tries >= MAX_CLEANUP_TRIES {
        tracing::warn!(batch_id = %batch.id, error = ?error, "gave up deleting the batch's copies at the provider");
        let why = format!("clean-up given up after {MAX_CLEANUP_TRIES} tries");
        return store::next_batch_cleanup(client, batch.id, None, Some(&why)).await;
    }
    if let Some(error) = &error {
        tracing::warn!(batch_id = %batch.id, error = %error, "could not delete the batch's copies at the provider; trying again later");
    }
    store::next_batch_cleanup(client, batch.id, Some(retry_delay(batch.tries)), error.as_deref()).await
}

/// Batches an earlier submit of `batch` made that its lookup did not see: made between its first
/// submit and the provider's recorded answer, as many requests, not already ours. Recorded as
/// its extras, when no more than its submits could have made (else another stack's may be among
/// them: left alone). A lookup that fails is only logged: the batch's own clean-up goes on.
async fn late_extras<P>(
    app: &App<P>,
    client: &store::Client,
    profile: &ModelProfile,
    batch: &BatchLeftovers,
) -> Result<Vec<String>, StoreError> {
    let Some(since) = batch.submit_sent_at else { return Ok(Vec::new()) };
    let until =
        batch.submitted_at.and_then(|at| chrono::Duration::from_std(SUBMIT_CALL).ok().map(|call| at + call));
    let records = usize::try_from(batch.records).unwrap_or(1).max(1);
    let sent = Sent { since, until, requests: 1..=records };
    let found = match app.batches.find(profile, batch.id, &sent).await {
        Ok(Found::Matching(ids)) => ids,
        Ok(_) => return Ok(Vec::new()),
        Err(error) => {
            tracing::warn!(batch_id = %batch.id, error = %error, "could not look for extra batches made for this one");
            return Ok(Vec::new());
        }
    };
    let known = store::known_provider_batches(client, &found).await?;
    let unknown: Vec<String> = found.into_iter().filter(|id| !known.contains(id)).collect();
    // The submits that made neither the adopted batch nor a known extra.
    let known_made = usize::from(batch.provider_batch_id.is_some()) + batch.extra_batch_ids.len();
    let unseen = usize::try_from(batch.submits).unwrap_or(0).saturating_sub(known_made);
    if unknown.is_empty() {
        return Ok(unknown);
    }
    let until = sent.until.unwrap_or_else(chrono::Utc::now);
    if store::other_rows_unsure(client, &batch.profile, batch.id, until).await? {
        tracing::warn!(batch_id = %batch.id, "another batch row of this profile waits on a submit of unknown outcome: none taken as extras");
        return Ok(Vec::new());
    }
    if unknown.len() > unseen {
        tracing::warn!(batch_id = %batch.id, matching = unknown.len(), unseen, "batches alike made by another stack on the same key may be among those found: none taken as extras");
        return Ok(Vec::new());
    }
    tracing::warn!(batch_id = %batch.id, extras = unknown.len(), "found extra batches made for this one after its lookup: canceled and deleted");
    store::add_extra_batches(client, batch.id, &unknown).await?;
    Ok(unknown)
}
