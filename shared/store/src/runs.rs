//! Runs: create and read (`sql/runs/`); a run's cancel is in `cancel.rs`.

use aitasks_contracts::{RunProgress, RunState, RUN_PROGRESS_COUNTED_MAX};
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::{new_id, CreatedRun, NewRun, Run};
use crate::pool::GenericClient;
use crate::queries::{CREATE_RUN, GET_RUN, RUN_PROGRESS};

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

/// How far along a run of this application is: its tasks counted by status, over its first
/// [`RUN_PROGRESS_COUNTED_MAX`] (`complete: false` when it has more). `None` for another
/// application's or a missing run. One round trip.
pub async fn run_progress(
    client: &impl GenericClient,
    app_id: &str,
    run_id: Uuid,
) -> StoreResult<Option<RunProgress>> {
    let statement = client.prepare_cached(RUN_PROGRESS.text()).await?;
    let counted_max = RUN_PROGRESS_COUNTED_MAX as i64;
    let params =
        RUN_PROGRESS.bind(&[("run_id", &run_id), ("app_id", &app_id), ("counted_max", &counted_max)])?;
    let Some(row) = client.query_opt(&statement, &params).await? else {
        return Ok(None);
    };
    let count = |name: &str| -> StoreResult<u64> { Ok(row.try_get::<_, i64>(name)?.max(0) as u64) };
    let state: String = row.try_get("state")?;
    let state = RunState::parse(&state).ok_or_else(|| StoreError::Corrupt(format!("run state {state:?}")))?;
    let (queued, running, succeeded, failed, canceled) =
        (count("queued")?, count("running")?, count("succeeded")?, count("failed")?, count("canceled")?);
    Ok(Some(RunProgress {
        run_id: row.try_get("id")?,
        state,
        queued,
        running,
        succeeded,
        failed,
        canceled,
        total: queued + running + succeeded + failed + canceled,
        complete: !row.try_get::<_, bool>("more")?,
    }))
}
