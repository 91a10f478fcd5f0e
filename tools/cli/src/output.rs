//! What the commands print: text for people, JSON (`--json`) for scripts. Results go to
//! standard output; progress, status lines and errors to standard error.

use std::io::Write;

use aitasks_client::{Run, Task};
use serde::Serialize;

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
        task.id, task.status, task.kind, task.step_key, task.effect_key
    )
}

/// A task, field by field, its output in full.
pub(crate) fn task(task: &Task) {
    println!("id:          {}", task.id);
    println!("status:      {}", task.status);
    println!("kind:        {}", task.kind);
    println!("step key:    {}", task.step_key);
    println!("effect key:  {}", task.effect_key);
    if let Some(run) = task.run_id {
        println!("run:         {run}");
    }
    println!("model:       {}", task.model_id);
    println!("attempts:    {}", task.attempts);
    println!("created:     {}", task.created_at.to_rfc3339());
    if let Some(at) = task.completed_at {
        println!("completed:   {}", at.to_rfc3339());
    }
    if let Some(code) = &task.error_code {
        println!("error:       {code}: {}", task.error_message.as_deref().unwrap_or_default());
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
    println!("scope:       {}", run.scope_id);
    println!("created:     {}", run.created_at.to_rfc3339());
    if let Some(at) = run.cancel_requested_at {
        println!("canceled:    {}", at.to_rfc3339());
    }
}
