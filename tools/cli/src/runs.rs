//! `runs create|get|cancel|list`; `get` with the run's tasks by status (`progress` draws
//! them as a bar when standard output is a terminal).

use aitasks_client::{Client, ListRuns, RunProgress, RunState};
use aitasks_contracts::limits::RUN_PROGRESS_COUNTED_MAX;
use futures::{pin_mut, TryStreamExt};
use serde_json::json;

use crate::args::{RunsCommand, RunsListArgs};
use crate::failure::Failure;
use crate::output;
use crate::progress::{self, Tally};
use crate::times::instant;

pub(crate) async fn run(client: &Client, command: &RunsCommand, json: bool) -> Result<(), Failure> {
    let run = match command {
        RunsCommand::Create { scope, actor, idempotency_key: None } => {
            client.create_run(scope, actor.as_deref()).await?
        }
        RunsCommand::Create { scope, actor, idempotency_key: Some(key) } => {
            client.create_run_with_key(scope, actor.as_deref(), key).await?
        }
        RunsCommand::Get { id } if json => client.get_run(*id).await?,
        RunsCommand::Get { id } => {
            let run = client.get_run(*id).await?;
            output::run(&run);
            match client.run_progress(*id).await {
                Ok(progress) => {
                    println!("{}", tasks_lines(&progress, progress::drawable(&std::io::stdout())))
                }
                // The run was found, so a 404 here is a server from before the progress read:
                // the run alone, as that server's CLI printed it.
                Err(error) if error.status() == Some(404) => {}
                Err(error) => return Err(error.into()),
            }
            return Ok(());
        }
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

/// `runs get`'s `tasks:` line: the run's tasks by status, after their bar when standard output
/// is a terminal (`drawn`), and a line more when they are counted over the run's first tasks.
fn tasks_lines(progress: &RunProgress, drawn: bool) -> String {
    let tally = Tally {
        queued: progress.queued,
        running: progress.running,
        succeeded: progress.succeeded,
        failed: progress.failed,
        canceled: progress.canceled,
    };
    let mut lines = match drawn {
        true => format!("tasks:       {} {}", tally.bar(), tally.text()),
        false => format!("tasks:       {}", tally.text()),
    };
    if !progress.complete {
        let counted = grouped(RUN_PROGRESS_COUNTED_MAX);
        lines.push_str(&format!("\n             (counted over the run's first {counted} tasks)"));
    }
    lines
}

/// A count with its thousands grouped: `10,000`.
fn grouped(count: usize) -> String {
    let digits = count.to_string();
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
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

#[cfg(test)]
mod tests {
    use aitasks_client::{RunProgress, RunState};
    use uuid::Uuid;

    use super::tasks_lines;

    #[test]
    fn a_run_counted_over_its_first_tasks_says_so_under_its_counts() {
        let progress = RunProgress {
            run_id: Uuid::nil(),
            state: RunState::Running,
            queued: 1,
            running: 1,
            succeeded: 2,
            failed: 1,
            canceled: 0,
            total: 5,
            complete: false,
        };
        let counts = "3/5 done · succeeded 2 · failed 1 · canceled 0 · running 1 · queued 1";
        let grouped = [super::grouped(999), super::grouped(10_000), super::grouped(1_234_567)];
        assert_eq!(grouped, ["999", "10,000", "1,234,567"]);
        let under = format!(
            "(counted over the run's first {} tasks)",
            super::grouped(super::RUN_PROGRESS_COUNTED_MAX)
        );
        assert_eq!(tasks_lines(&progress, false), format!("tasks:       {counts}\n             {under}"));
        let drawn = tasks_lines(&progress, true);
        assert!(drawn.starts_with("tasks:       [") && drawn.contains(&format!("] {counts}\n")), "{drawn}");
        let whole = RunProgress { complete: true, ..progress };
        assert_eq!(tasks_lines(&whole, false), format!("tasks:       {counts}"));
    }
}
