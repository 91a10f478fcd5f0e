//! `runs create|get|cancel`.

use aitasks_client::Client;

use crate::args::RunsCommand;
use crate::failure::Failure;
use crate::output;

pub(crate) async fn run(client: &Client, command: &RunsCommand, json: bool) -> Result<(), Failure> {
    let run = match command {
        RunsCommand::Create { scope, actor } => client.create_run(scope, actor.as_deref()).await?,
        RunsCommand::Get { id } => client.get_run(*id).await?,
        RunsCommand::Cancel { id } => client.cancel_run(*id).await?,
    };
    if json {
        output::json(&run);
    } else {
        output::run(&run);
    }
    Ok(())
}
