//! Forming batches: each profile's tasks awaiting a batch, looked at in bounded pages.

use aitasks_providers::ModelProfile;
use aitasks_store::{self as store, BatchGroup, Formed, StoreError};

use super::{send_now, BatchSummary, BATCH_MAX_BYTES};
use crate::app::App;

/// Form what batches are due, and send on-demand what will not wait for one: the tasks near
/// their window's end first, then each profile's group (at most `max_pages` batches a profile
/// per sweep; a profile without a batch API has its awaiting tasks sent on-demand, a page at a
/// time).
pub async fn form_batches<P>(
    app: &App<P>,
    page: usize,
    max_pages: usize,
    summary: &mut BatchSummary,
) -> Result<(), StoreError> {
    let slack = app.settings.runtime.deferred_slack;
    let mut client = store::client(&app.pool).await?;
    for _ in 0..max_pages {
        let due = store::send_due_now(&client, slack, page).await?;
        summary.deferred_sent_now += due.len() as u64;
        send_now(app, &client, &due).await?;
        if due.len() < page {
            break;
        }
    }
    let profiles: Vec<&ModelProfile> =
        app.profiles.ids().filter_map(|id| app.profiles.resolve(id).ok()).collect();
    for profile in profiles {
        let Some(batch) = profile.batching() else {
            for _ in 0..max_pages {
                let now = store::send_profile_now(&client, &profile.id, page).await?;
                summary.deferred_sent_now += now.len() as u64;
                send_now(app, &client, &now).await?;
                if now.len() < page {
                    break;
                }
            }
            continue;
        };
        let group = BatchGroup {
            profile: &profile.id,
            provider: &profile.provider,
            max_records: batch.max_records,
            max_bytes: BATCH_MAX_BYTES,
            max_wait: batch.max_wait,
            min_records: batch.min_records,
            slack,
        };
        for _ in 0..max_pages {
            match store::form_batch(&mut client, &group).await? {
                Formed::Nothing | Formed::Waiting => break,
                Formed::Opened { batch_id, tasks } => {
                    tracing::info!(%batch_id, profile = %profile.id, tasks, "opened a batch");
                    summary.batches_opened += 1;
                    summary.batched_tasks += tasks as u64;
                }
                Formed::SentNow(owed) => {
                    tracing::info!(profile = %profile.id, tasks = owed.len(), min_records = batch.min_records, "too few for a batch: sent on-demand");
                    summary.deferred_sent_now += owed.len() as u64;
                    send_now(app, &client, &owed).await?;
                    break;
                }
            }
        }
    }
    Ok(())
}
