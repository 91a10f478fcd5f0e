//! How a row becomes a record of `crate::model`, and the values every task insert binds.

use serde_json::value::RawValue;
use tokio_postgres::types::{FromSql, Type};
use tokio_postgres::Row;

use crate::error::{StoreError, StoreResult};
use crate::model::{
    Custody, Ended, ListedTask, NewTask, PendingEvent, Run, RunState, Task, TaskOwner, TaskStatus,
};
use crate::statement::Param;

pub(crate) fn task_status(text: &str) -> StoreResult<TaskStatus> {
    TaskStatus::parse(text).ok_or_else(|| StoreError::Corrupt(format!("task status {text:?}")))
}

impl Task {
    /// A task just inserted from `new`, completed by the columns the database filled in (what
    /// the inserts return). The request is not shipped back and parsed again: that was about a
    /// twentieth of the lifecycle's throughput at 64 clients (BENCHMARKS.md).
    pub(crate) fn inserted(new: &NewTask, row: &Row) -> StoreResult<Task> {
        let (run_id, usage_subject) = match &new.owner {
            TaskOwner::Run(run_id) => (Some(*run_id), None),
            TaskOwner::Application { usage_subject, .. } => (None, usage_subject.clone()),
        };
        Ok(Task {
            id: row.try_get("id")?,
            app_id: new.app_id.clone(),
            run_id,
            usage_subject,
            usage_user_id: row.try_get("usage_user_id")?,
            scope_id: row.try_get("scope_id")?,
            source_id: row.try_get("source_id")?,
            cache_key: row.try_get("cache_key")?,
            step_key: new.step_key.clone(),
            effect_key: new.effect_key.clone(),
            kind: new.kind.clone(),
            request: new.request.clone(),
            input_hash: new.input_hash.clone(),
            model_id: new.model_id.clone(),
            model_ref: new.model_ref.clone(),
            model_config_hash: new.model_config_hash.clone(),
            status: task_status(row.try_get("status")?)?,
            output: None,
            usage: None,
            attempts: row.try_get("attempts")?,
            max_attempts: new.max_attempts,
            error_code: None,
            error_message: None,
            cancel_requested_at: None,
            heartbeat_at: None,
            released_at: None,
            created_at: row.try_get("created_at")?,
            started_at: None,
            completed_at: None,
            updated_at: row.try_get("updated_at")?,
            trace_header: new.trace_header.clone(),
            deferred_by: row.try_get("deferred_by")?,
            awaiting_batch: row.try_get("awaiting_batch")?,
            unheld_at: None,
            holds: Vec::new(),
            replay_of: new.replay_of,
            replay_operation: new.replay_operation,
        })
    }

    pub(crate) fn from_row(row: &Row) -> StoreResult<Task> {
        let mut task = Task::from_row_without_documents(row)?;
        task.request = row.try_get("request")?;
        task.output = row.try_get("output")?;
        Ok(task)
    }

    /// Every column but the request (`null`) and the output (`None`), which are not parsed.
    pub(crate) fn from_row_without_documents(row: &Row) -> StoreResult<Task> {
        Ok(Task {
            id: row.try_get("id")?,
            app_id: row.try_get("app_id")?,
            run_id: row.try_get("run_id")?,
            usage_subject: row.try_get("usage_subject")?,
            usage_user_id: row.try_get("usage_user_id")?,
            scope_id: row.try_get("scope_id")?,
            source_id: row.try_get("source_id")?,
            cache_key: row.try_get("cache_key")?,
            step_key: row.try_get("step_key")?,
            effect_key: row.try_get("effect_key")?,
            kind: row.try_get("kind")?,
            request: serde_json::Value::Null,
            input_hash: row.try_get("input_hash")?,
            model_id: row.try_get("model_id")?,
            model_ref: row.try_get("model_ref")?,
            model_config_hash: row.try_get("model_config_hash")?,
            status: task_status(row.try_get("status")?)?,
            output: None,
            usage: row.try_get("usage")?,
            attempts: row.try_get("attempts")?,
            max_attempts: row.try_get("max_attempts")?,
            error_code: row.try_get("error_code")?,
            error_message: row.try_get("error_message")?,
            cancel_requested_at: row.try_get("cancel_requested_at")?,
            heartbeat_at: row.try_get("heartbeat_at")?,
            released_at: row.try_get("released_at")?,
            created_at: row.try_get("created_at")?,
            started_at: row.try_get("started_at")?,
            completed_at: row.try_get("completed_at")?,
            updated_at: row.try_get("updated_at")?,
            trace_header: row.try_get("trace_header")?,
            deferred_by: row.try_get("deferred_by")?,
            awaiting_batch: row.try_get("awaiting_batch")?,
            unheld_at: None,
            holds: Vec::new(),
            replay_of: row.try_get("replay_of")?,
            replay_operation: row.try_get("replay_operation")?,
        })
    }
}

impl Run {
    pub(crate) fn from_row(row: &Row) -> StoreResult<Run> {
        let text: &str = row.try_get("state")?;
        let state =
            RunState::parse(text).ok_or_else(|| StoreError::Corrupt(format!("run state {text:?}")))?;
        Ok(Run {
            id: row.try_get("id")?,
            app_id: row.try_get("app_id")?,
            scope_id: row.try_get("scope_id")?,
            state,
            actor: row.try_get("actor")?,
            cancel_requested_at: row.try_get("cancel_requested_at")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

impl NewTask {
    /// The columns every task insert binds the same way, by their parameter names.
    pub(crate) fn request_values(&self) -> [Param<'_>; 16] {
        [
            ("step_key", &self.step_key),
            ("effect_key", &self.effect_key),
            ("kind", &self.kind),
            ("request", &self.request),
            ("input_hash", &self.input_hash),
            ("model_id", &self.model_id),
            ("model_ref", &self.model_ref),
            ("model_config_hash", &self.model_config_hash),
            ("max_attempts", &self.max_attempts),
            ("trace_header", &self.trace_header),
            ("deferred_window_ms", &self.deferred_window_ms),
            ("awaiting_batch", &self.awaiting_batch),
            ("has_poller", &self.has_poller),
            ("scope_terms", &self.scope_terms),
            ("replay_of", &self.replay_of),
            ("replay_operation", &self.replay_operation),
        ]
    }
}

pub(crate) fn ended_from_row(row: &Row) -> StoreResult<Ended> {
    Ok(Ended { task: Task::from_row(row)?, event: ended_event_from_row(row)? })
}

/// The completion event of a task a statement ended, as it answers it (`id`, and
/// fragments/ended_event.sql: `event_id`, `event_payload`).
pub(crate) fn ended_event_from_row(row: &Row) -> StoreResult<PendingEvent> {
    Ok(PendingEvent {
        id: row.try_get("event_id")?,
        task_id: row.try_get("id")?,
        payload: row.try_get("event_payload")?,
        custody: Custody::Outbox,
    })
}

/// Split settled rows into the terminal ones (with their event) and the rest.
pub(crate) fn split_ended(rows: &[Row]) -> StoreResult<(Vec<Ended>, Vec<Task>)> {
    let mut settled = Vec::new();
    let mut other = Vec::new();
    for row in rows {
        if row.try_get::<_, Option<i64>>("event_id")?.is_some() {
            settled.push(ended_from_row(row)?);
        } else {
            other.push(Task::from_row(row)?);
        }
    }
    Ok((settled, other))
}

/// A completion event as the outbox holds it (`id, task_id, payload`).
pub(crate) fn event_from_row(row: &Row) -> StoreResult<PendingEvent> {
    Ok(PendingEvent {
        id: row.try_get("id")?,
        task_id: row.try_get("task_id")?,
        payload: row.try_get("payload")?,
        custody: Custody::Outbox,
    })
}

/// A `json` or `jsonb` value as its text, untouched (the binary `jsonb` format is a version byte,
/// 1, then the text).
struct JsonText<'a>(&'a str);

impl<'a> FromSql<'a> for JsonText<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let text = match (*ty == Type::JSONB, raw.split_first()) {
            (true, Some((1, text))) => text,
            (true, _) => return Err("jsonb in an unknown binary version".into()),
            (false, _) => raw,
        };
        Ok(JsonText(std::str::from_utf8(text)?))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSON || *ty == Type::JSONB
    }
}

fn raw_json(text: &str) -> StoreResult<Box<RawValue>> {
    RawValue::from_string(text.to_owned()).map_err(|e| StoreError::Corrupt(format!("stored JSON: {e}")))
}

impl ListedTask {
    /// A task row read for a listing: every column but the request and the output decoded, those
    /// two kept as their text.
    pub(crate) fn from_row(row: &Row) -> StoreResult<ListedTask> {
        let request: JsonText<'_> = row.try_get("request")?;
        let output: Option<JsonText<'_>> = row.try_get("output")?;
        Ok(ListedTask {
            task: Task::from_row_without_documents(row)?,
            request: raw_json(request.0)?,
            output: output.map(|text| raw_json(text.0)).transpose()?,
        })
    }
}
