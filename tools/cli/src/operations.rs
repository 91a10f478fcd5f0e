//! Operations: `cancel`/`replay` with filter flags create one; `operations list|get|wait|stop`
//! read and steer them. Following one prints a line each time its state or counts change.

use std::time::Duration;

use aitasks_client::{
    all_operations, is_ended, Client, Kind, ListOperations, NewOperation, NewOperationFilter, Operation,
    OperationAction, OperationState, Outcome, TaskStatus,
};
use futures::{pin_mut, TryStreamExt};
use serde_json::json;
use uuid::Uuid;

use crate::args::{FilterArgs, OperationsCommand, OperationsListArgs};
use crate::failure::Failure;
use crate::output;
use crate::times::instant;

/// How often a followed operation is read.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// The API's filter of the flags.
fn filter_of(args: &FilterArgs) -> Result<NewOperationFilter, Failure> {
    let status = args
        .status
        .iter()
        .map(|text| {
            TaskStatus::parse(text).ok_or_else(|| {
                Failure::Input(format!(
                    "--status {text}: one of queued, running, succeeded, failed, canceled"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let kind = match &args.kind {
        Some(text) => Some(Kind::parse(text).ok_or_else(|| {
            Failure::Input(format!(
                "--kind {text}: one of generate_text, classify, classify_many, extract_data"
            ))
        })?),
        None => None,
    };
    Ok(NewOperationFilter {
        run_id: args.run,
        scope_id: args.scope.clone(),
        status: (!status.is_empty()).then_some(status),
        kind,
        model_id: args.model.clone(),
        error_code: args.error_code.clone(),
        created_after: instant("--created-after", args.created_after.as_deref())?,
        created_before: instant("--created-before", args.created_before.as_deref())?,
    })
}

/// `cancel`/`replay` with filter flags: create the operation, then (`--wait`) follow it.
pub(crate) async fn create(
    client: &Client,
    action: OperationAction,
    args: &FilterArgs,
    recompute: bool,
    json: bool,
) -> Result<(), Failure> {
    let operation = NewOperation { action, filter: filter_of(args)?, recompute };
    let created = match &args.idempotency_key {
        Some(key) => client.create_operation_with_key(&operation, key).await?,
        None => client.create_operation(&operation).await?,
    };
    let word = match created.outcome {
        Outcome::Created => "created",
        Outcome::Existing => "existing",
    };
    if !args.wait {
        if json {
            output::json(&created);
        } else {
            println!("{word} {}", output::operation_line(&created.operation));
        }
        return Ok(());
    }
    if json {
        output::json_line(&created);
    } else {
        eprintln!("{word} operation {} ({})", created.operation.id, created.operation.action.as_str());
    }
    follow(client, created.operation, args.timeout, json).await
}

/// Print the operation each time it changes until it ends: exit 0 `done`, 1 `stopped`, 4 at
/// the timeout (the operation goes on).
async fn follow(client: &Client, first: Operation, seconds: u64, json: bool) -> Result<(), Failure> {
    let id = first.id;
    let mut last: Option<(OperationState, [i64; 4])> = None;
    let mut show = |operation: &Operation| {
        let now = (operation.state, output::progress(operation));
        if last == Some(now) {
            return;
        }
        last = Some(now);
        if json {
            output::json_line(&json!({"operation": operation}));
        } else {
            println!("{}", output::operation_progress(operation));
        }
    };
    show(&first);
    let ended = if is_ended(&first) {
        first
    } else {
        client.wait_operation_with(id, Duration::from_secs(seconds), FOLLOW_EVERY, &mut show).await?
    };
    if !json {
        output::operation_reasons(&ended);
    }
    match ended.state {
        OperationState::Stopped => Err(Failure::Ended(format!("operation {id} stopped"))),
        _ => Ok(()),
    }
}

pub(crate) async fn run(client: &Client, command: &OperationsCommand, json: bool) -> Result<(), Failure> {
    let operation = match command {
        OperationsCommand::List(args) => return list(client, args, json).await,
        OperationsCommand::Get { id } => client.get_operation(*id).await?,
        OperationsCommand::Stop { id } => client.stop_operation(*id).await?,
        OperationsCommand::Wait { id, timeout } => {
            let first = client.get_operation(*id).await?;
            return follow(client, first, *timeout, json).await;
        }
    };
    if json {
        output::json(&operation);
    } else {
        output::operation(&operation);
    }
    Ok(())
}

async fn list(client: &Client, args: &OperationsListArgs, json: bool) -> Result<(), Failure> {
    let state = match &args.state {
        Some(text) => Some(
            OperationState::parse(text)
                .ok_or_else(|| Failure::Input(format!("--state {text}: one of running, stopped, done")))?,
        ),
        None => None,
    };
    let listing = ListOperations { state, after: args.after, ..all_operations() };
    let limit = args.limit.unwrap_or(usize::MAX);
    let stream = client.operations(listing);
    pin_mut!(stream);
    let (mut operations, mut count) = (Vec::new(), 0);
    let mut last: Option<Uuid> = None;
    while count < limit {
        let Some(operation) = stream.try_next().await? else { break };
        count += 1;
        last = Some(operation.id);
        if json {
            operations.push(operation);
        } else {
            println!("{}", output::operation_line(&operation));
        }
    }
    if json {
        let mut answer = json!({"operations": operations, "count": count});
        if let (true, Some(last)) = (count == limit, last) {
            answer["next"] = json!(last);
        }
        output::json(&answer);
    } else {
        eprintln!("{count} operations");
    }
    Ok(())
}
