//! `create`, `get`, `wait`, `cancel`: one task at a time.

use std::io::Read;
use std::time::Duration;

use aitasks_client::{Client, Created, OperationAction, Outcome, Task, TaskBody, TaskStatus};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::args::{CancelArgs, CreateArgs, GetArgs};
use crate::failure::Failure;
use crate::output;

/// Long polls of at most this long, so the status line shows `queued → running`.
const WAIT_SLICE: Duration = Duration::from_secs(5);

/// A file's text, or standard input's for `-`.
pub(crate) fn read_input(path: &std::path::Path) -> Result<String, Failure> {
    let mut text = String::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    read.map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?;
    Ok(text)
}

/// `--input`: JSON, or a bare word taken as a string.
fn parse_input(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The create body the flags describe; the API judges it (missing pieces included).
fn body_from_flags(args: &CreateArgs) -> Result<Value, Failure> {
    let mut request = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            request.insert(key.to_owned(), value);
        }
    };
    put("kind", args.kind.clone().map(Value::from));
    put("prompt", args.prompt.clone().map(Value::from));
    put("input", args.input.as_deref().map(parse_input));
    put("choices", (!args.choices.is_empty()).then(|| json!(args.choices)));
    put("maxOutputChars", args.max_output_chars.map(Value::from));
    let fields = match &args.fields {
        Some(text) => Some(
            serde_json::from_str::<Value>(text)
                .map_err(|e| Failure::Input(format!("--fields: not JSON: {e}")))?,
        ),
        None => None,
    };
    put("fields", fields);
    let mut body = Map::new();
    match (&args.run, &args.scope) {
        (Some(run), _) => body.insert("runId".into(), json!(run)),
        (None, Some(scope)) => body.insert("owner".into(), json!({"scopeId": scope})),
        (None, None) => return Err(Failure::Input("give --run, --scope or --file".into())),
    };
    let step = args.step.clone().ok_or_else(|| Failure::Input("give --step".into()))?;
    let effect_key = args.effect_key.clone().ok_or_else(|| Failure::Input("give --effect-key".into()))?;
    body.insert("stepKey".into(), step.into());
    body.insert("effectKey".into(), effect_key.into());
    body.insert("modelId".into(), args.model.clone().into());
    body.insert("request".into(), Value::Object(request));
    Ok(Value::Object(body))
}

pub(crate) async fn create(client: &Client, args: &CreateArgs, json: bool) -> Result<(), Failure> {
    let body = match &args.file {
        Some(path) => {
            let text = read_input(path)?;
            serde_json::from_str(&text)
                .map_err(|e| Failure::Input(format!("{}: not valid JSON: {e}", path.display())))?
        }
        None => body_from_flags(args)?,
    };
    let created = client.create(&TaskBody::unchecked(body)).await?;
    let Some(seconds) = args.wait else {
        if json {
            output::json(&created);
        } else {
            let word = match created.outcome {
                Outcome::Created => "created",
                Outcome::Existing => "existing",
            };
            println!("{word} {}", output::task_line(&created.task));
        }
        return Ok(());
    };
    let task = waiting(client, created.task.id, seconds, json).await?;
    let ended = Created { outcome: created.outcome, task };
    if json {
        output::json(&ended);
    } else {
        output::task(&ended.task);
    }
    succeeded(&ended.task)
}

pub(crate) async fn get(client: &Client, args: &GetArgs, json: bool) -> Result<(), Failure> {
    let task = match (&args.id, &args.effect_key) {
        (Some(id), _) => client.get(*id).await?,
        (None, Some(key)) => client.get_by_effect_key(key).await?,
        (None, None) => return Err(Failure::Input("give a task id or --effect-key".into())),
    };
    if json {
        output::json(&task);
    } else {
        output::task(&task);
    }
    Ok(())
}

/// Long-poll a task until it ends, a live status line on standard error (when it is a terminal).
pub(crate) async fn waiting(client: &Client, id: Uuid, seconds: u64, json: bool) -> Result<Task, Failure> {
    let line = ProgressBar::new_spinner();
    if json {
        line.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    line.set_style(
        ProgressStyle::with_template("{spinner} {msg} · {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    line.enable_steady_tick(Duration::from_millis(120));
    line.set_message(format!("task {id}: waiting"));
    let result = client
        .wait_with(id, Duration::from_secs(seconds), WAIT_SLICE, |task| {
            let attempts =
                if task.attempts > 0 { format!(" (attempt {})", task.attempts) } else { String::new() };
            line.set_message(format!("task {id}: {}{attempts}", task.status));
        })
        .await;
    line.finish_and_clear();
    Ok(result?)
}

pub(crate) async fn wait(client: &Client, id: Uuid, seconds: u64, json: bool) -> Result<(), Failure> {
    let task = waiting(client, id, seconds, json).await?;
    if json {
        output::json(&task);
    } else {
        output::task(&task);
    }
    succeeded(&task)
}

/// Exit 1 for a task that ended but did not succeed.
pub(crate) fn succeeded(task: &Task) -> Result<(), Failure> {
    match task.status {
        TaskStatus::Succeeded => Ok(()),
        status if status.is_terminal() => {
            let code = task.error_code.as_deref().unwrap_or(status.as_str());
            if task.status == TaskStatus::Failed {
                eprintln!("task {} failed: {code}", task.id);
            }
            Err(Failure::Ended(format!("the task ended {status} ({code})")))
        }
        _ => Ok(()),
    }
}

pub(crate) async fn cancel(client: &Client, args: &CancelArgs, json: bool) -> Result<(), Failure> {
    if args.filter.is_operation() {
        return crate::operations::create(client, OperationAction::Cancel, &args.filter, false, json).await;
    }
    match (&args.id, &args.filter.run) {
        (_, Some(run)) => {
            let run = client.cancel_run(*run).await?;
            if json {
                output::json(&run);
            } else {
                output::run(&run);
            }
        }
        (Some(id), None) => {
            let task = client.cancel(*id).await?;
            if json {
                output::json(&task);
            } else {
                println!("{}", output::task_line(&task));
            }
        }
        (None, None) => return Err(Failure::Input("give a task id, --run, --scope or --all".into())),
    }
    Ok(())
}
