//! `runs create|get|cancel|list`.

use aitasks_client::{Client, ListRuns, RunState};
use futures::{pin_mut, TryStreamExt};
use serde_json::json;

use crate::args::{RunsCommand, RunsListArgs};
use crate::failure::Failure;
use crate::output;
use crate::times::instant;

pub(crate) async fn run(client: &Client, command: &RunsCommand, json: bool) -> Result<(), Failure> {
    let run = match command {
        RunsCommand::Create { scope, actor, idempotency_key: None } => {
            client.create_run(scope, actor.as_deref()).await?
        }
        RunsCommand::Create { scope, actor, idempotency_key: Some(key) } => {
            client.create_run_with_key(scope, actor.as_deref(), key).await?
        }
        RunsCommand::Get { id } => client.get_run(*id).await?,
        RunsCommand::Cancel { id } => client.cancel_run(*id).await?,
        RunsCommand::List(args) => return list(client, args, json).await,
    };
    if json {
        output::json(&run);
    } else {
        output::run(&run);
    }
    Ok(())
}

/// `runs list`: every run of the filters, page by page, up to `--limit`.
async fn list(client: &Client, args: &RunsListArgs, json: bool) -> Result<(), Failure> {
    let status = match &args.status {
        Some(text) => Some(
            RunState::parse(text)
                .ok_or_else(|| Failure::Input(format!("--status {text}: one of running, canceled")))?,
        ),
        None => None,
    };
    let listing = ListRuns {
        status,
        scope_id: args.scope.clone(),
        created_after: instant("--created-after", args.created_after.as_deref())?,
        created_before: instant("--created-before", args.created_before.as_deref())?,
        after: args.after,
        limit: usize::from(args.page_size),
    };
    let limit = args.limit.unwrap_or(usize::MAX);
    let stream = client.runs(listing);
    pin_mut!(stream);
    let (mut runs, mut count) = (Vec::new(), 0);
    while count < limit {
        let Some(run) = stream.try_next().await? else { break };
        count += 1;
        if json {
            runs.push(run);
        } else {
            println!("{}", output::listed_run_line(&run));
        }
    }
    if json {
        // Stopped by --limit: `--after` this id goes on from here.
        let last = (count == limit).then(|| runs.last().map(|run| run.id)).flatten();
        let mut answer = json!({"runs": runs, "count": count});
        if let Some(last) = last {
            answer["next"] = json!(last);
        }
        output::json(&answer);
    } else {
        eprintln!("{count} runs");
    }
    Ok(())
}
