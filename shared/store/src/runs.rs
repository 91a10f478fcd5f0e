//! Runs: create and read (`sql/runs/`); a run's cancel is in `cancel.rs`.

use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::{new_id, NewRun, Run};
use crate::pool::GenericClient;
use crate::queries::{CREATE_RUN, GET_RUN};

/// Create a run. One round trip.
pub async fn create_run(client: &impl GenericClient, run: &NewRun) -> StoreResult<Run> {
    let statement = client.prepare_cached(CREATE_RUN.text()).await?;
    let id = new_id();
    let params = CREATE_RUN.bind(&[
        ("id", &id),
        ("app_id", &run.app_id),
        ("scope_id", &run.scope_id),
        ("actor", &run.actor),
    ])?;
    let row = client.query_one(&statement, &params).await?;
    Run::from_row(&row)
}

/// A run of this application, or `None` (another application's run is `None` too).
pub async fn get_run(client: &impl GenericClient, app_id: &str, run_id: Uuid) -> StoreResult<Option<Run>> {
    let statement = client.prepare_cached(GET_RUN.text()).await?;
    let params = GET_RUN.bind(&[("run_id", &run_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Run::from_row).transpose()
}
