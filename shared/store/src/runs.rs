//! Runs: create and read (`sql/runs/`); a run's cancel is in `cancel.rs`.

use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::{new_id, CreatedRun, NewRun, Run};
use crate::pool::GenericClient;
use crate::queries::{CREATE_RUN, GET_RUN};

/// Create a run, or find the tenant's run of its idempotency key. One round trip; a second
/// when a create of the same key committed while this one's statement ran (its row is seen by
/// the next statement only).
pub async fn create_run(client: &impl GenericClient, run: &NewRun) -> StoreResult<CreatedRun> {
    let statement = client.prepare_cached(CREATE_RUN.text()).await?;
    for _ in 0..3 {
        let id = new_id();
        let params = CREATE_RUN.bind(&[
            ("id", &id),
            ("app_id", &run.app_id),
            ("scope_id", &run.scope_id),
            ("actor", &run.actor),
            ("idempotency_key", &run.idempotency_key),
        ])?;
        if let Some(row) = client.query_opt(&statement, &params).await? {
            let found = Run::from_row(&row)?;
            let new: bool = row.try_get("new")?;
            return Ok(if new { CreatedRun::New(found) } else { CreatedRun::Existing(found) });
        }
    }
    Err(StoreError::Corrupt("a run's idempotency key conflicted, but its run was not found".into()))
}

/// A run of this application, or `None` (another application's run is `None` too).
pub async fn get_run(client: &impl GenericClient, app_id: &str, run_id: Uuid) -> StoreResult<Option<Run>> {
    let statement = client.prepare_cached(GET_RUN.text()).await?;
    let params = GET_RUN.bind(&[("run_id", &run_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Run::from_row).transpose()
}
