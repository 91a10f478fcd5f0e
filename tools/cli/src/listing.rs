//! `list`: a run's or a scope's tasks, page by page.

use aitasks_client::{Client, Kind, ListTasks, TaskFilter, TaskStatus};
use futures::{pin_mut, TryStreamExt};
use serde_json::json;

use crate::args::{ListArgs, Owner};
use crate::failure::Failure;
use crate::output;
use crate::times::instant;

fn filter(owner: &Owner) -> Result<TaskFilter, Failure> {
    match (&owner.run, &owner.scope) {
        (Some(run), _) => Ok(TaskFilter::Run(*run)),
        (None, Some(scope)) => Ok(TaskFilter::Scope(scope.clone())),
        (None, None) => Err(Failure::Input("give --run or --scope".into())),
    }
}

pub(crate) async fn list(client: &Client, args: &ListArgs, json: bool) -> Result<(), Failure> {
    let status = match &args.status {
        Some(text) => Some(TaskStatus::parse(text).ok_or_else(|| {
            Failure::Input(format!("--status {text}: one of queued, running, succeeded, failed, canceled"))
        })?),
        None => None,
    };
    let kind = match &args.kind {
        Some(text) => Some(Kind::parse(text).ok_or_else(|| {
            Failure::Input(format!(
                "--kind {text}: one of generate_text, classify, classify_many, extract_data"
            ))
        })?),
        None => None,
    };
    let listing = ListTasks {
        filter: filter(&args.owner)?,
        status,
        kind,
        model_id: args.model.clone(),
        created_after: instant("--created-after", args.created_after.as_deref())?,
        created_before: instant("--created-before", args.created_before.as_deref())?,
        after: args.after,
        limit: usize::from(args.page_size),
    };
    let limit = args.limit.unwrap_or(usize::MAX);
    let stream = client.list(listing);
    pin_mut!(stream);
    let mut tasks = Vec::new();
    let mut count = 0;
    while count < limit {
        let Some(task) = stream.try_next().await? else { break };
        count += 1;
        if json {
            tasks.push(task);
        } else {
            println!("{}", output::task_line(&task));
        }
    }
    if json {
        // Stopped by --limit: `--after` this id goes on from here.
        let last = (count == limit).then(|| tasks.last().map(|t| t.id)).flatten();
        let mut answer = json!({"tasks": tasks, "count": count});
        if let Some(last) = last {
            answer["next"] = json!(last);
        }
        output::json(&answer);
    } else {
        eprintln!("{count} tasks");
    }
    Ok(())
}
