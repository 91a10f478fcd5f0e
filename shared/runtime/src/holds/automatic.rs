//! The automatic hold (docs/api.md, "Holds"): `AITASK_HOLD_AFTER_FAILURES` attempts of different
//! tasks in a row whose call at a profile failed on the provider's side hold it for every tenant.
//! While held, one parked task at a time is the probe (`holds.probe_task`, a lease of two
//! `AITASK_HOLD_PROBE_MS` intervals): its claim calls the profile; the first probe the provider
//! answers releases the hold and sends the parked tasks again. The sweeper takes a lapsed lease.

use std::time::Instant;

use aitasks_store::{self as store, StoreError};
use uuid::Uuid;

use crate::app::App;
use crate::metrics;

/// A call at `profile` of `task_id` failed on the provider's side: count it (one statement). The
/// profile's active automatic hold, placed now or before, when there is one.
pub(crate) async fn failed_at<P>(app: &App<P>, profile: &str, task_id: Uuid) -> Option<Uuid> {
    let config = app.settings.runtime.holds;
    let reason = format!(
        "The provider failed {} attempts of different tasks in a row (5xx, 408, timeouts, connection errors or 429 without Retry-After).",
        config.after_failures
    );
    let noted = async {
        let client = store::client(&app.pool).await?;
        store::note_failure(&client, profile, task_id, config.after_failures, &reason).await
    };
    match noted.await {
        Ok(noted) => {
            app.failing.failed(profile);
            if let Some(hold_id) = noted.placed {
                metrics::profile_held(profile);
                tracing::warn!(
                    profile,
                    hold_id = %hold_id,
                    failures = noted.failures,
                    "profile held: its provider kept failing; its tasks are parked until a probe gets an answer"
                );
            }
            noted.held
        }
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), profile, "could not count the provider's failure");
            None
        }
    }
}

/// The provider answered a call at `profile`: its count starts again, with a statement only when
/// this instance saw it above zero.
pub(crate) async fn answered<P>(app: &App<P>, profile: &str) {
    if !app.failing.answered(profile) {
        return;
    }
    let reset = async {
        let client = store::client(&app.pool).await?;
        store::reset_failures(&client, profile).await
    };
    if let Err(error) = reset.await {
        tracing::warn!(error = %crate::error_chain(&error), profile, "could not reset the profile's count of failures");
    }
}

/// The probe's call at `profile` got an answer: release its automatic hold and send the parked
/// tasks again (the first pages now, the rest by the sweeper).
pub(crate) async fn release_by_probe<P>(app: &App<P>, profile: &str, hold_id: Uuid) {
    let config = &app.settings.runtime;
    let released = async {
        let client = store::client(&app.pool).await?;
        let Some(_) = store::release_hold(&client, None, hold_id).await? else { return Ok(None) };
        store::reset_failures(&client, profile).await?;
        let until = Instant::now() + config.request_work;
        super::resend(app, &client, hold_id, config.request_page, until).await.map(Some)
    };
    match released.await {
        Ok(Some(resent)) => {
            app.failing.answered(profile);
            metrics::profile_released(profile);
            tracing::info!(
                profile,
                hold_id = %hold_id,
                resent = resent.sent,
                all_resent = resent.done,
                "profile released: a probe got an answer from its provider; its parked tasks are sent again"
            );
        }
        Ok(None) => {}
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), profile, "could not release the held profile; its next probe will")
        }
    }
}

/// The sweeper's holds duty: released holds whose parked tasks are not all sent again are
/// finished, and each automatic hold whose probe lease lapsed (no probe ran for two intervals)
/// sends its first parked task as the probe. Returns (tasks sent again, probes sent).
pub(crate) async fn probe_lapsed_holds<P>(
    app: &App<P>,
    client: &store::Client,
    page: usize,
    until: Instant,
) -> Result<(u64, u64), StoreError> {
    let probe = app.settings.runtime.holds.probe;
    let (mut resent, mut probes) = (0, 0);
    for hold in store::unfinished_holds(client, page).await? {
        if hold.released {
            resent += super::resend(app, client, hold.id, page, until).await?.sent;
        } else if let Some(task) = store::take_probe(client, hold.id, probe).await? {
            let failed = app.queues.send_tasks(std::slice::from_ref(&task)).await;
            if failed.is_empty() {
                probes += 1;
            }
        }
        if Instant::now() >= until {
            break;
        }
    }
    Ok((resent, probes))
}
