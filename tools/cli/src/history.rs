//! `history <taskId>`: a task's attempts, its completion events, its callbacks (never a token)
//! and the provider batch it was sent in (docs/api.md, "History").

use aitasks_client::Client;
use serde_json::json;
use uuid::Uuid;

use crate::failure::Failure;
use crate::output;

pub(crate) async fn history(client: &Client, id: Uuid, json: bool) -> Result<(), Failure> {
    let attempts = client.task_attempts(id).await?;
    let events = client.task_events(id).await?;
    let callbacks = client.task_callbacks(id).await?;
    let batch = client.task_batch(id).await?;
    if json {
        output::json(&json!({
            "taskId": id, "attempts": attempts, "events": events, "callbacks": callbacks, "batch": batch
        }));
    } else {
        output::attempts(&attempts);
        output::history(&events, &callbacks, batch.as_ref());
    }
    Ok(())
}
