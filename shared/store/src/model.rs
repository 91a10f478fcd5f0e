//! The store's vocabulary: the records it reads and writes, the outcomes of its operations, and
//! the budgets and refusals of admission. Plain types only; how a row becomes one is in `rows.rs`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

pub use aitasks_contracts::{RunState, TaskStatus};

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
    /// A deferred task's window end: its creation plus its `within` (migrations/V20).
    pub deferred_by: Option<DateTime<Utc>>,
    /// Queued and waiting for a provider batch: no task message is owed for it.
    pub awaiting_batch: bool,
    /// When a hold that parked it was released: its queue timeout counts from then
    /// (migrations/V34). Read by a claim only (`None` elsewhere).
    pub unheld_at: Option<DateTime<Utc>>,
    /// The active holds that may touch it, as its claim read them (empty elsewhere).
    pub holds: Vec<ActiveHold>,
    /// The task this one replays (migrations/V33): a replay only.
    pub replay_of: Option<Uuid>,
    /// The operation that made this replay, when one did.
    pub replay_operation: Option<Uuid>,
}

impl Task {
    /// The lease a worker holds after claiming this task: settling writes are fenced on it. An
    /// on-demand attempt belongs to no provider batch (a claim clears `batch_id`).
    pub fn lease(&self) -> Lease {
        Lease { task_id: self.id, attempt: self.attempts, scoped: self.cache_key.is_some(), batch_id: None }
    }
}

/// A task as a listing reads it: its request and output as the JSON text Postgres stores, never
/// parsed into a tree (a request of many small values is tens of times its size as one), so a
/// page costs about the bytes it answers with. `task.request` is `null` and `task.output`
/// `None`; the text is here.
#[derive(Debug, Clone)]
pub struct ListedTask {
    pub task: Task,
    pub request: Box<serde_json::value::RawValue>,
    pub output: Option<Box<serde_json::value::RawValue>>,
}

/// A claimed attempt: `(task id, attempt number, provider batch)`. Every write a worker makes
/// matches it, so a stale worker (requeued, canceled or reclaimed under it) changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub task_id: Uuid,
    pub attempt: i32,
    /// A scoped task (admission, cache): ending it also lowers its shard's count of active
    /// scoped tasks (the trigger on `tasks`, migrations/V38).
    pub scoped: bool,
    /// The provider batch running this attempt; `None` for an on-demand attempt. A batch gives
    /// its tasks back with their attempt uncounted, so the next attempt (on-demand, or in a newer
    /// batch) has the same number: only this tells the holder from a batch the task has left,
    /// whose late or duplicate result must change nothing.
    pub batch_id: Option<Uuid>,
}

impl Lease {
    /// Whether this attempt's success is written by a statement of its own
    /// ([`crate::complete_attempt`]) rather than with others that end together
    /// ([`crate::complete_many`]): a scoped task's completion also updates its shard's count
    /// row, and a group of them would lock several count rows in no set order (two groups could
    /// deadlock). The one place that says so.
    pub fn completes_alone(&self) -> bool {
        self.scoped
    }
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

/// A run to create.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub app_id: String,
    pub scope_id: String,
    pub actor: Option<Value>,
    /// The client's key for this create (`Idempotency-Key`): the tenant's run of this key, if it
    /// has one, is answered instead of a new run (migrations/V29, its index V30).
    pub idempotency_key: Option<String>,
}

/// What a run create found.
#[derive(Debug, Clone, PartialEq)]
pub enum CreatedRun {
    /// A new run was stored.
    New(Run),
    /// The idempotency key names a run of the tenant already: that run, untouched.
    Existing(Run),
}

impl CreatedRun {
    pub fn run(&self) -> &Run {
        match self {
            CreatedRun::New(run) | CreatedRun::Existing(run) => run,
        }
    }

    pub fn is_new(&self) -> bool {
        matches!(self, CreatedRun::New(_))
    }
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
    /// A deferred task's window (`delivery.deferred.within`), in milliseconds.
    pub deferred_window_ms: Option<i64>,
    /// The task waits for a provider batch (deferred, and its profile batches).
    pub awaiting_batch: bool,
    /// The create names no callback: its caller reads the task (GET, a long poll) and waits for
    /// it as long as it lives, so it is never canceled for want of callers (migrations/V23).
    pub has_poller: bool,
    /// A scoped create's terms (`scope` less `recompute`, as its create gave them), kept so that
    /// the task can be replayed on them (migrations/V33); `None` for an unscoped task.
    pub scope_terms: Option<Value>,
    /// A replay: the task it replays, and the operation that made it if one did.
    pub replay_of: Option<Uuid>,
    pub replay_operation: Option<Uuid>,
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
    /// What stands behind it until it is published.
    pub custody: Custody,
}

/// What stands behind a completion event until it is published (docs/lifecycle.md, "Completion
/// events").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Custody {
    /// The outbox: written undelivered, marked delivered by its publisher once published; the
    /// sweeper publishes what is not marked.
    Outbox,
    /// Handed over to its writer's publish (process-task's completions, migrations/V41): written
    /// delivered, marked back only when the publish fails; if the writer dies first, its task's
    /// SQS message comes back and the worker that receives it publishes it again
    /// ([`crate::take_handed_over`]). `owes_callbacks`: its ending made callbacks owed, which
    /// the publisher still takes for their call.
    HandedOver { owes_callbacks: bool },
}

/// A terminal transition that took effect, with the event it wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
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
    Canceled(Ended),
    /// The task is running elsewhere or already terminal (a duplicate delivery): ack and go.
    NotClaimable(TaskStatus),
    /// No such task (deleted with its scope's data, or never existed).
    Missing,
    /// Queued, but its row was held by another transaction just then (the claim never waits on
    /// a row): deliver the record again in a moment.
    Busy,
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

/// A new task or run id: a UUIDv7, whose leading 48 bits are the creation time in
/// milliseconds. Primary-key inserts land at the right edge of the index instead of on a random
/// leaf of it, and an id range is a time range (the partitioning design in SCALING.md). The
/// gain for an index bigger than memory was not measurable on the development machine; the
/// cost, more waits on the right-edge page at 64 clients, was (BENCHMARKS.md).
pub(crate) fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// The limits one create brings (each a positive safe integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionBudget {
    pub burst: i64,
    pub tasks_per_minute: i64,
    pub max_steps_per_source: i64,
    pub sources_per_24_hours: i64,
    pub scope_concurrent: i64,
    pub global_concurrent: i64,
}

/// The scope block of a create, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedAdmission {
    pub source_id: String,
    /// Hash of source, revision, request, model configuration and owner.
    pub cache_key: String,
    /// Skip the cache; the logical step is then the task itself.
    pub recompute: bool,
    pub budget: AdmissionBudget,
    /// What the operator configured, whatever the caller's budget says.
    pub limits: ServerLimits,
}

/// Limits from configuration, never from a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerLimits {
    /// The system-wide cap on active scoped tasks across every application
    /// (`AITASK_SYSTEM_ACTIVE_CAP`).
    pub system_cap: Option<i64>,
    /// New tasks this tenant may create per UTC day (`AITASK_TENANT_QUOTAS`).
    pub tenant_tasks_per_day: Option<i64>,
}

/// Why admission refused a create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionRefusal {
    #[error("the scope's token bucket is empty")]
    RateLimited { retry_after: Duration },
    #[error("too many active scoped tasks")]
    Capacity,
    #[error("the source used up its steps for 24 hours")]
    SourceBudget,
    #[error("the scope used up its sources for 24 hours")]
    DailyBudget,
    /// The tenant's server-side quota of new tasks for the UTC day is spent.
    #[error("the application used up its tasks for today")]
    TenantQuota { retry_after: Duration },
}

impl AdmissionRefusal {
    pub fn code(&self) -> aitasks_contracts::ErrorCode {
        use aitasks_contracts::ErrorCode;
        match self {
            AdmissionRefusal::RateLimited { .. } => ErrorCode::RateLimit,
            AdmissionRefusal::Capacity => ErrorCode::Capacity,
            AdmissionRefusal::SourceBudget => ErrorCode::SourceBudget,
            AdmissionRefusal::DailyBudget => ErrorCode::DailyBudget,
            AdmissionRefusal::TenantQuota { .. } => ErrorCode::TenantQuota,
        }
    }

    /// When asking again may succeed, if the refusal knows.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            AdmissionRefusal::RateLimited { retry_after } | AdmissionRefusal::TenantQuota { retry_after } => {
                Some(*retry_after)
            }
            _ => None,
        }
    }
}

/// A scoped create's outcome: a cache hit is a new task already `succeeded`, with the
/// completion event to publish.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedCreated {
    pub created: Created,
    pub event: Option<PendingEvent>,
}

/// An active hold that may touch a claimed task, as its claim read it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveHold {
    pub id: Uuid,
    pub profile: Option<String>,
    pub scope_id: Option<String>,
    /// Every tenant's (placed when the profile's provider kept failing).
    pub automatic: bool,
    /// This task is the automatic hold's probe: its attempt may call the held profile.
    pub probe: bool,
    /// The automatic hold's probe lease is free (never taken, or lapsed): a task that can run on
    /// a fallback takes it (holds/claim_probe.sql), so a held profile whose tasks never park is
    /// probed all the same.
    #[serde(default)]
    pub probe_free: bool,
}
