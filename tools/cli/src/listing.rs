//! `list` (a run's or a scope's tasks, page by page) and `tail` (a run's tasks as they change).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use aitasks_client::{tasks_of, Client, ListTasks, RunState, TaskFilter, TaskStatus};
use chrono::{DateTime, Utc};
use futures::{pin_mut, TryStreamExt};
use serde_json::json;
use tokio::time::Instant;
use uuid::Uuid;

use crate::args::{ListArgs, Owner, TailArgs};
use crate::failure::Failure;
use crate::output;

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
    let listing = ListTasks {
        filter: filter(&args.owner)?,
        status,
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

pub(crate) async fn tail(client: &Client, args: &TailArgs, json: bool) -> Result<(), Failure> {
    let interval = Duration::try_from_secs_f64(args.interval)
        .ok()
        .filter(|i| *i >= Duration::from_millis(100))
        .ok_or_else(|| Failure::Input("--interval: at least 0.1 seconds".into()))?;
    let deadline = args.timeout.map(|s| Instant::now() + Duration::from_secs(s));
    let mut seen: HashMap<Uuid, (TaskStatus, DateTime<Utc>)> = HashMap::new();
    loop {
        let run = client.get_run(args.run).await?;
        let tasks = client.list_all(tasks_of(TaskFilter::Run(args.run))).await?;
        for task in &tasks {
            let now = (task.status, task.updated_at);
            let previous = seen.insert(task.id, now);
            if previous == Some(now) {
                continue;
            }
            let before = previous.map(|(status, _)| status);
            if json {
                output::json_line(&json!({"previous": before, "task": task}));
            } else {
                let change = match before {
                    Some(before) if before != task.status => format!("{before} -> {}", task.status),
                    _ => task.status.to_string(),
                };
                let error = task.error_code.as_deref().unwrap_or_default();
                println!(
                    "{}  {}  {}  {change}  {error}",
                    task.updated_at.to_rfc3339(),
                    task.id,
                    task.step_key
                );
            }
        }
        let ended = tasks.iter().all(|t| t.is_terminal());
        if args.until_done && ended && (!tasks.is_empty() || run.state == RunState::Canceled) {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for task in &tasks {
                *counts.entry(task.status.as_str()).or_default() += 1;
            }
            if json {
                output::json_line(&json!({"done": true, "run": run.id, "counts": counts}));
            } else {
                eprintln!("run {}: all {} tasks ended {counts:?}", run.id, tasks.len());
            }
            return Ok(());
        }
        if deadline.is_some_and(|d| Instant::now() + interval > d) {
            return match args.until_done {
                true => Err(Failure::Timeout(format!("run {}: tasks still open at --timeout", run.id))),
                false => Ok(()),
            };
        }
        tokio::time::sleep(interval).await;
    }
}
