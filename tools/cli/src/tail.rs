//! `tail --run R`: a run's tasks as they change. The first read lists the whole run; after it,
//! each read costs what is open, not what has ended: the run's tasks created since the last
//! one seen (`after`), its `queued` and `running` tasks, and a read by id of each open task that
//! left both lists (it ended, or moved between the two reads).
//!
//! On a terminal, a live bar of the run (its tasks by status, exact: every task is followed)
//! stays at the bottom of standard error while the changes print above it (`progress`).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use aitasks_client::{tasks_of, Client, ListTasks, RunState, Task, TaskFilter, TaskStatus};
use chrono::{DateTime, Utc};
use indicatif::ProgressBar;
use serde_json::json;
use tokio::time::Instant;
use uuid::Uuid;

use crate::args::TailArgs;
use crate::failure::Failure;
use crate::output;
use crate::progress::{self, Tally};
use crate::shown;

/// What is known of the run's tasks.
struct Follower {
    run: Uuid,
    /// Each task's last status and update.
    seen: HashMap<Uuid, (TaskStatus, DateTime<Utc>)>,
    /// The last task id seen: newer tasks are listed after it.
    cursor: Option<Uuid>,
    json: bool,
    /// The live bar (hidden off a terminal and with `--json`).
    bar: ProgressBar,
}

impl Follower {
    fn listing(&self, status: Option<TaskStatus>, after: Option<Uuid>) -> ListTasks {
        ListTasks { status, after, ..tasks_of(TaskFilter::Run(self.run)) }
    }

    /// Read what changed since the last read, and print it.
    async fn read(&mut self, client: &Client) -> Result<(), Failure> {
        let open: Vec<Uuid> =
            self.seen.iter().filter(|(_, (status, _))| !status.is_terminal()).map(|(id, _)| *id).collect();
        let created = client.list_all(self.listing(None, self.cursor)).await?;
        if let Some(last) = created.last() {
            self.cursor = Some(last.id);
        }
        let mut current = created;
        let mut listed: std::collections::HashSet<Uuid> = current.iter().map(|t| t.id).collect();
        // Every open task, even one the cursor passed (created in a transaction that committed
        // after a newer one's).
        for status in [TaskStatus::Queued, TaskStatus::Running] {
            for task in client.list_all(self.listing(Some(status), None)).await? {
                if listed.insert(task.id) {
                    current.push(task);
                }
            }
        }
        for id in open.into_iter().filter(|id| !listed.contains(id)) {
            current.push(client.get(id).await?);
        }
        for task in &current {
            self.show(task);
        }
        Ok(())
    }

    fn show(&mut self, task: &Task) {
        let now = (task.status, task.updated_at);
        let previous = self.seen.insert(task.id, now);
        if previous == Some(now) {
            return;
        }
        let before = previous.map(|(status, _)| status);
        if self.json {
            output::json_line(&json!({"previous": before, "task": task}));
            return;
        }
        let change = match before {
            Some(before) if before != task.status => format!("{before} -> {}", task.status),
            _ => task.status.to_string(),
        };
        let error = task.error_code.as_deref().unwrap_or_default();
        let line = format!(
            "{}  {}  {}  {change}  {error}",
            task.updated_at.to_rfc3339(),
            task.id,
            shown::line(&task.step_key)
        );
        progress::println(&self.bar, &line);
    }

    /// The bar drawn again with the tasks as they are now.
    fn draw(&self, state: RunState) {
        let mut tally = Tally::default();
        for (status, _) in self.seen.values() {
            let count = match status {
                TaskStatus::Queued => &mut tally.queued,
                TaskStatus::Running => &mut tally.running,
                TaskStatus::Succeeded => &mut tally.succeeded,
                TaskStatus::Failed => &mut tally.failed,
                TaskStatus::Canceled => &mut tally.canceled,
            };
            *count += 1;
        }
        self.bar.set_message(format!("{} {} · run {}", tally.bar(), tally.text(), state.as_str()));
    }

    /// Tasks by status.
    fn counts(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for (status, _) in self.seen.values() {
            *counts.entry(status.as_str()).or_default() += 1;
        }
        counts
    }

    fn all_ended(&self) -> bool {
        self.seen.values().all(|(status, _)| status.is_terminal())
    }
}

pub(crate) async fn tail(client: &Client, args: &TailArgs, json: bool) -> Result<(), Failure> {
    let interval = Duration::try_from_secs_f64(args.interval)
        .ok()
        .filter(|i| *i >= Duration::from_millis(100))
        .ok_or_else(|| Failure::Input("--interval: at least 0.1 seconds".into()))?;
    let deadline = args.timeout.map(|s| Instant::now() + Duration::from_secs(s));
    let bar = progress::live(json, "{msg}");
    let mut follower = Follower { run: args.run, seen: HashMap::new(), cursor: None, json, bar };
    loop {
        // The run first: a task that joins it after this read is listed by the next.
        let run = client.get_run(args.run).await?;
        follower.read(client).await?;
        follower.draw(run.state);
        let has_tasks = !follower.seen.is_empty();
        if args.until_done && follower.all_ended() && (has_tasks || run.state == RunState::Canceled) {
            progress::leave(&follower.bar);
            let counts = follower.counts();
            if json {
                output::json_line(&json!({"done": true, "run": run.id, "counts": counts}));
            } else {
                eprintln!("run {}: all {} tasks ended {counts:?}", run.id, follower.seen.len());
            }
            return Ok(());
        }
        if deadline.is_some_and(|d| Instant::now() + interval > d) {
            progress::leave(&follower.bar);
            return match args.until_done {
                true => Err(Failure::Timeout(format!("run {}: tasks still open at --timeout", run.id))),
                false => Ok(()),
            };
        }
        tokio::time::sleep(interval).await;
    }
}
