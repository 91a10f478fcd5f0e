//! `replay <taskId>`: one ended task again, as a new task; with filter flags, an operation.

use aitasks_client::{Client, OperationAction, Outcome, Replay};

use crate::args::ReplayArgs;
use crate::failure::Failure;
use crate::{operations, output};

pub(crate) async fn replay(client: &Client, args: &ReplayArgs, json: bool) -> Result<(), Failure> {
    let Some(id) = args.id else {
        return operations::create(client, OperationAction::Replay, &args.filter, args.recompute, json).await;
    };
    let asked = Replay { effect_key: args.effect_key.clone(), recompute: args.recompute };
    let created = client.replay(id, &asked).await?;
    if json {
        output::json(&created);
    } else {
        let word = match created.outcome {
            Outcome::Created => "created",
            Outcome::Existing => "existing",
        };
        println!("{word} {}", output::task_line(&created.task));
    }
    Ok(())
}
