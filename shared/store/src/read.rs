//! Reading a task of one application: by id or by effect key (`sql/read/`). Another
//! application's task is `None`, exactly as a missing one.

use uuid::Uuid;

use crate::error::StoreResult;
use crate::model::Task;
use crate::pool::GenericClient;
use crate::queries::{GET_TASK, GET_TASK_BY_EFFECT_KEY};

/// A task of this application, or `None` (another application's task is `None` too).
pub async fn get_task(client: &impl GenericClient, app_id: &str, task_id: Uuid) -> StoreResult<Option<Task>> {
    let statement = client.prepare_cached(GET_TASK.text()).await?;
    let params = GET_TASK.bind(&[("task_id", &task_id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Task::from_row).transpose()
}

/// A task of this application by its effect key.
pub async fn get_task_by_effect_key(
    client: &impl GenericClient,
    app_id: &str,
    effect_key: &str,
) -> StoreResult<Option<Task>> {
    let statement = client.prepare_cached(GET_TASK_BY_EFFECT_KEY.text()).await?;
    let params = GET_TASK_BY_EFFECT_KEY.bind(&[("app_id", &app_id), ("effect_key", &effect_key)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(Task::from_row).transpose()
}
