//! The deferred work each sweep samples for the metrics: per batching profile, the tasks awaiting
//! a batch and the age of the oldest; and the time left before the nearest window end of a
//! deferred task not yet done, which the stack's deadline alarm watches.

use aitasks_store::{self as store, StoreError};
use serde::Serialize;

use crate::app::App;

/// Tasks awaiting a batch are counted up to this many per profile (a bounded look).
const WAITING_COUNT_CAP: u64 = 100_000;

/// One profile's tasks awaiting a batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileWaiting {
    pub profile: String,
    pub waiting: u64,
    pub oldest_ms: Option<f64>,
}

/// The deferred work as one sweep sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeferredSample {
    pub profiles: Vec<ProfileWaiting>,
    /// Milliseconds until the nearest window end of a deferred task not yet done (negative:
    /// passed); `None` when there is none.
    pub nearest_window_ms: Option<f64>,
}

pub async fn sample_deferred<P>(app: &App<P>) -> Result<DeferredSample, StoreError> {
    let client = store::client(&app.pool).await?;
    let mut profiles = Vec::new();
    for id in app.profiles.ids() {
        let Ok(profile) = app.profiles.resolve(id) else { continue };
        if profile.batching().is_none() {
            continue;
        }
        let (waiting, oldest_ms) = store::batch_waiting(&client, id, WAITING_COUNT_CAP).await?;
        profiles.push(ProfileWaiting { profile: id.to_owned(), waiting, oldest_ms });
    }
    let nearest_window_ms = store::nearest_window(&client, app.settings.runtime.deferred_slack).await?;
    Ok(DeferredSample { profiles, nearest_window_ms })
}
