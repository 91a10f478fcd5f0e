//! What the commands print: text for people, JSON (`--json`) for scripts. Results go to
//! standard output; progress, status lines and errors to standard error.

use std::io::Write;

use aitasks_client::{
    Hold, ListedRun, Operation, Run, Task, TaskAttempts, TaskBatch, TaskCallbacks, TaskEvents, TenantSummary,
};
use serde::Serialize;

use crate::shown;

/// One JSON document, pretty-printed.
pub(crate) fn json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("error: printing JSON: {e}"),
    }
}

/// One JSON document on one line (a line of JSONL), flushed at once for a pipe.
pub(crate) fn json_line(value: &impl Serialize) {
    if let Ok(text) = serde_json::to_string(value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// A task in one line: id, status, kind, step key, effect key.
pub(crate) fn task_line(task: &Task) -> String {
    let error = task.error_code.as_deref().map(|code| format!("  {code}")).unwrap_or_default();
    format!(
        "{}  {:<9}  {:<13}  {}  {}{error}",
        task.id,
        task.status,
        task.kind,
        shown::line(&task.step_key),
        shown::line(&task.effect_key)
    )
}

/// A task, field by field, its output in full.
pub(crate) fn task(task: &Task) {
    println!("id:          {}", task.id);
    println!("status:      {}", task.status);
    println!("kind:        {}", task.kind);
    println!("step key:    {}", shown::line(&task.step_key));
    println!("effect key:  {}", shown::line(&task.effect_key));
    if let Some(run) = task.run_id {
        println!("run:         {run}");
    }
    if let Some(original) = task.replay_of {
        println!("replay of:   {original}");
    }
    println!("model:       {}", shown::line(&task.model_id));
    println!("attempts:    {}", task.attempts);
    println!("created:     {}", task.created_at.to_rfc3339());
    if let Some(at) = task.completed_at {
        println!("completed:   {}", at.to_rfc3339());
    }
    if let Some(code) = &task.error_code {
        println!("error:       {code}: {}", shown::block(task.error_message.as_deref().unwrap_or_default()));
    }
    if let Some(usage) = &task.usage {
        println!("usage:       {usage}");
    }
    if let Some(output) = &task.output {
        let text = serde_json::to_string_pretty(output).unwrap_or_else(|_| output.to_string());
        println!("output:      {text}");
    }
}

/// A run, field by field.
pub(crate) fn run(run: &Run) {
    println!("id:          {}", run.id);
    println!("state:       {}", run.state.as_str());
    println!("scope:       {}", shown::line(&run.scope_id));
    println!("created:     {}", run.created_at.to_rfc3339());
    if let Some(at) = run.cancel_requested_at {
        println!("canceled:    {}", at.to_rfc3339());
    }
}

/// A listed run in one line: id, state, scope, its tasks by status, creation time.
pub(crate) fn listed_run_line(run: &ListedRun) -> String {
    use aitasks_contracts::limits::RUN_TASKS_COUNTED_MAX;
    let t = &run.tasks;
    format!(
        "{}  {:<8}  {}  queued {} running {} succeeded {} failed {} canceled {}{}  {}",
        run.id,
        run.state.as_str(),
        shown::line(&run.scope_id),
        t.queued,
        t.running,
        t.succeeded,
        t.failed,
        t.canceled,
        if t.more { format!(" (its first {RUN_TASKS_COUNTED_MAX} tasks counted)") } else { String::new() },
        run.created_at.to_rfc3339()
    )
}

fn at(time: Option<chrono::DateTime<chrono::Utc>>) -> String {
    time.map(|at| at.to_rfc3339()).unwrap_or_else(|| "-".to_owned())
}

/// A task's history: its events, its callbacks and its batch, a section each.
pub(crate) fn attempts(attempts: &TaskAttempts) {
    println!("attempts ({}{}):", attempts.attempts.len(), if attempts.more { ", more" } else { "" });
    for attempt in &attempts.attempts {
        let usage = attempt
            .usage
            .map(|u| format!("  tokens {} in / {} out", u.input_tokens, u.output_tokens))
            .unwrap_or_default();
        let cost = attempt.estimated_cost_usd.map(|c| format!("  ${c:.6}")).unwrap_or_default();
        let answered = match (&attempt.profile, &attempt.model_id) {
            (Some(profile), Some(model)) => format!("  {} ({})", shown::line(profile), shown::line(model)),
            (Some(profile), None) => format!("  {}", shown::line(profile)),
            (None, Some(model)) => format!("  ({})", shown::line(model)),
            (None, None) => String::new(),
        };
        let error = match (&attempt.error_code, &attempt.error_message) {
            (Some(code), Some(message)) => format!("  {code}: {}", shown::line(message)),
            (Some(code), None) => format!("  {code}"),
            _ => String::new(),
        };
        println!(
            "  #{}  {}  started {}  ended {}{answered}{usage}{cost}{error}",
            attempt.attempt,
            attempt.outcome.as_str(),
            attempt.started_at.to_rfc3339(),
            at(attempt.ended_at),
        );
    }
}

pub(crate) fn summary(summary: &TenantSummary) {
    let tasks = &summary.tasks;
    println!(
        "tasks created {} .. {}: queued {} running {} succeeded {} failed {} canceled {}",
        summary.created_after.to_rfc3339(),
        summary.created_before.to_rfc3339(),
        tasks.queued,
        tasks.running,
        tasks.succeeded,
        tasks.failed,
        tasks.canceled
    );
    for cost in &summary.costs {
        println!(
            "  {}  {}  tasks {}  tokens {} in / {} out  cost {}",
            cost.day,
            shown::line(&cost.model_id),
            cost.tasks,
            cost.input_tokens,
            cost.output_tokens,
            cost.estimated_cost_usd.map(|c| format!("${c:.6}")).unwrap_or_else(|| "-".into())
        );
    }
    if !summary.complete {
        println!("(the newest {} tasks of the window: it holds more)", summary.examined);
    }
}

pub(crate) fn history(events: &TaskEvents, callbacks: &TaskCallbacks, batch: Option<&TaskBatch>) {
    println!("events ({}{}):", events.events.len(), if events.more { ", more" } else { "" });
    for event in &events.events {
        println!(
            "  {}  {}  created {}  delivered {}",
            event.kind,
            event.status,
            event.created_at.to_rfc3339(),
            at(event.delivered_at)
        );
    }
    println!("callbacks ({}{}):", callbacks.callbacks.len(), if callbacks.more { ", more" } else { "" });
    for callback in &callbacks.callbacks {
        println!(
            "  {}  {}  attached {}  heartbeat {}  due {}  ended {}  tries {}",
            callback.kind,
            callback.state,
            callback.attached_at.to_rfc3339(),
            callback.heartbeat_at.to_rfc3339(),
            at(callback.due_at),
            at(callback.ended_at),
            callback.tries
        );
    }
    match batch {
        None => println!("batch: none"),
        Some(batch) => println!(
            "batch: {}  {} {}  {}{}  requests {} pending {}  created {}  ended {}",
            batch.id,
            batch.provider,
            batch.provider_batch_id.as_deref().unwrap_or("-"),
            batch.status,
            batch.outcome.as_deref().map(|o| format!(" ({o})")).unwrap_or_default(),
            batch.requests,
            batch.pending,
            batch.created_at.to_rfc3339(),
            at(batch.ended_at)
        ),
    }
}

/// The counts a person follows: matched, done, skipped, failed.
pub(crate) fn progress(operation: &Operation) -> [i64; 4] {
    [operation.matched, operation.done, operation.skipped, operation.failed]
}

/// An operation's counts: `matched 10  done 4  skipped 1  failed 0`.
fn counts(operation: &Operation) -> String {
    let [matched, done, skipped, failed] = progress(operation);
    format!("matched {matched}  done {done}  skipped {skipped}  failed {failed}")
}

/// An operation in one line: id, action, state, counts, creation time.
pub(crate) fn operation_line(operation: &Operation) -> String {
    format!(
        "{}  {:<6}  {:<7}  {}  {}",
        operation.id,
        operation.action.as_str(),
        operation.state.as_str(),
        counts(operation),
        operation.created_at.to_rfc3339()
    )
}

/// A followed operation's line: when it changed, its state and counts.
pub(crate) fn operation_progress(operation: &Operation) -> String {
    format!("{}  {:<7}  {}", operation.updated_at.to_rfc3339(), operation.state.as_str(), counts(operation))
}

/// Why tasks were skipped or failed, a line each (nothing when none were).
pub(crate) fn operation_reasons(operation: &Operation) {
    for (word, reasons) in [("skipped", &operation.skipped_because), ("failed", &operation.failed_because)] {
        if !reasons.is_empty() {
            let text: Vec<String> = reasons.iter().map(|(code, n)| format!("{code} {n}")).collect();
            println!("{word}:{}{}", " ".repeat(13 - word.len()), text.join(", "));
        }
    }
}

/// An operation, field by field.
pub(crate) fn operation(operation: &Operation) {
    println!("id:          {}", operation.id);
    println!(
        "action:      {}{}",
        operation.action.as_str(),
        if operation.recompute { " (recompute)" } else { "" }
    );
    println!("state:       {}", operation.state.as_str());
    println!("filter:      {}", serde_json::to_string(&operation.filter).unwrap_or_default());
    println!("counts:      {}", counts(operation));
    operation_reasons(operation);
    println!("created:     {}", operation.created_at.to_rfc3339());
    println!("ended:       {}", at(operation.ended_at));
}

/// A hold in one line: id, kind, target, reason, since when, and its release.
pub(crate) fn hold_line(hold: &Hold) -> String {
    let released = match (hold.released_at, hold.released_by) {
        (Some(at), Some(by)) => format!(
            "  released {} by {}",
            at.to_rfc3339(),
            serde_json::to_value(by).unwrap_or_default().as_str().unwrap_or_default()
        ),
        (Some(at), None) => format!("  released {}", at.to_rfc3339()),
        _ => String::new(),
    };
    format!(
        "{}  {:<9}  {}  {}  since {}{released}",
        hold.id,
        hold.kind.as_str(),
        hold.target,
        hold.reason.as_deref().map(|r| format!("({r})")).unwrap_or_else(|| "-".into()),
        hold.created_at.to_rfc3339()
    )
}
