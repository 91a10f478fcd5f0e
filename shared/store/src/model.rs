//! The records the store reads and writes, and the outcomes of its operations.

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};

pub use aitasks_contracts::{RunState, TaskStatus};

pub(crate) fn task_status(text: &str) -> StoreResult<TaskStatus> {
    TaskStatus::parse(text).ok_or_else(|| StoreError::Corrupt(format!("task status {text:?}")))
}

/// A task as stored. Callers see `aitasks_runtime::answers::TaskAnswer`, built from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: Uuid,
    pub app_id: String,
    pub run_id: Option<Uuid>,
    pub usage_subject: Option<Value>,
    pub usage_user_id: Option<String>,
    pub scope_id: Option<String>,
    pub source_id: Option<String>,
    pub cache_key: Option<String>,
    pub step_key: String,
    pub effect_key: String,
    pub kind: String,
    pub request: Value,
    pub input_hash: String,
    pub model_id: String,
    pub model_ref: Option<Value>,
    pub model_config_hash: Option<String>,
    pub status: TaskStatus,
    pub output: Option<Value>,
    pub usage: Option<Value>,
    pub attempts: i32,
    pub max_attempts: i32,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
    /// The trace the task's create started (`aitasks_runtime::xray`), when it was traced.
    pub trace_header: Option<String>,
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
        })
    }

    pub(crate) fn from_row(row: &Row) -> StoreResult<Task> {
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
            request: row.try_get("request")?,
            input_hash: row.try_get("input_hash")?,
            model_id: row.try_get("model_id")?,
            model_ref: row.try_get("model_ref")?,
            model_config_hash: row.try_get("model_config_hash")?,
            status: task_status(row.try_get("status")?)?,
            output: row.try_get("output")?,
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
        })
    }

    /// The lease a worker holds after claiming this task: settling writes are fenced on it.
    pub fn lease(&self) -> Lease {
        Lease { task_id: self.id, attempt: self.attempts, scoped: self.cache_key.is_some() }
    }
}

/// A claimed attempt: `(task id, attempt number)`. Every write a worker makes matches it, so a
/// stale worker (requeued, canceled or reclaimed under it) changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub task_id: Uuid,
    pub attempt: i32,
    /// A scoped task (admission, cache): ending it also updates the admission bookkeeping.
    pub scoped: bool,
}

/// A workflow run: the owner of run tasks. Callers see `aitasks_runtime::answers::RunAnswer`.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub id: Uuid,
    pub app_id: String,
    pub scope_id: String,
    pub state: RunState,
    pub actor: Option<Value>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
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

/// A run to create.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub app_id: String,
    pub scope_id: String,
    pub actor: Option<Value>,
}

/// Who owns a task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOwner {
    /// A workflow run of the same application.
    Run(Uuid),
    /// The application itself, for a scope and (optionally) a usage subject.
    Application { scope_id: String, usage_subject: Option<Value> },
}

/// A task to create. The request is already validated and hashed by the contracts crate.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub app_id: String,
    pub owner: TaskOwner,
    pub step_key: String,
    pub effect_key: String,
    pub kind: String,
    pub request: Value,
    pub input_hash: String,
    pub model_id: String,
    pub model_ref: Option<Value>,
    pub model_config_hash: Option<String>,
    pub max_attempts: i32,
    /// The X-Ray trace header of the create, for the worker to continue (migrations/V13).
    pub trace_header: Option<String>,
}

impl NewTask {
    /// The columns every task insert binds the same way, by their parameter names.
    pub(crate) fn request_values(&self) -> [crate::statement::Param<'_>; 10] {
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
        ]
    }
}

/// The outcome of a create.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    /// A new task was stored (queued, or already succeeded from the result cache).
    New(Task),
    /// The effect key was already used by this application: the existing task, untouched.
    Existing(Task),
}

impl Created {
    pub fn task(&self) -> &Task {
        match self {
            Created::New(task) | Created::Existing(task) => task,
        }
    }

    pub fn into_task(self) -> Task {
        match self {
            Created::New(task) | Created::Existing(task) => task,
        }
    }

    pub fn is_new(&self) -> bool {
        matches!(self, Created::New(_))
    }
}

/// A completion event written in the same transaction as a terminal transition.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEvent {
    pub id: i64,
    pub task_id: Uuid,
    pub payload: Value,
}

/// A terminal transition that took effect, with the event it wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub task: Task,
    pub event: PendingEvent,
}

/// What a fenced write did. Every write a worker (or a cancel) makes after a claim matches the
/// state and attempt it expects: it either took effect, or the task moved on without it (it was
/// requeued, canceled, reclaimed or deleted under the writer) and nothing changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Fenced<T> {
    /// The write took effect; here is what it wrote.
    Written(T),
    /// The fence did not match: nothing changed.
    Lost,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// This worker owns the attempt.
    Claimed(Task),
    /// A cancel was requested before the task started; the claim settled it `canceled`.
    Canceled(Settled),
    /// The task is running elsewhere or already terminal (a duplicate delivery): ack and go.
    NotClaimable(TaskStatus),
    /// No such task (deleted with its scope's data, or never existed).
    Missing,
}

/// What a worker learns when it checks in on its lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseCheck {
    /// Still ours; carry on.
    Active,
    /// A cancel was requested: abort the provider call and settle `canceled`.
    CancelRequested,
    /// The lease is gone (requeued by the sweeper, settled, or the row was deleted): abort and
    /// write nothing.
    Lost,
}

pub(crate) fn settled_from_row(row: &Row) -> StoreResult<Settled> {
    Ok(Settled {
        task: Task::from_row(row)?,
        event: PendingEvent {
            id: row.try_get("event_id")?,
            task_id: row.try_get("id")?,
            payload: row.try_get("event_payload")?,
        },
    })
}

/// A new task or run id: a UUIDv7, whose leading 48 bits are the creation time in
/// milliseconds. Primary-key inserts land at the right edge of the index instead of on a random
/// leaf of it, and an id range is a time range (the partitioning design in SCALING.md). The
/// gain for an index bigger than memory was not measurable on the development machine; the
/// cost, more waits on the right-edge page at 64 clients, was (BENCHMARKS.md).
pub(crate) fn new_id() -> Uuid {
    Uuid::now_v7()
}
