//! aitasks request contracts. Pure code, no I/O:
//!
//! - [`CreateTask`], [`CreateRun`], [`Release`]: the HTTP bodies, parsed strictly (unknown
//!   fields refused) with every problem reported at once, each with its JSON path; a create's
//!   [`Callback`] (a Step Functions task token or a durable-function callback id).
//! - [`AiRequest`]: the four kinds (`generate_text`, `classify`, `classify_many`,
//!   `extract_data`) with every limit of the contract; serializes to the normalized stored form.
//! - [`answer_schema`]: the JSON Schema of the model's answer, usable with OpenAI structured
//!   outputs in strict mode; [`check_answer`] checks an answer against everything the request
//!   demands (including what strict mode cannot express) and returns the task's output.
//! - [`canonical_hash`]: SHA-256 of RFC 8785 canonical JSON, for the request hash, the cache key
//!   and the model configuration hash.
//! - [`stored_size`]: the bytes a value takes as Postgres `jsonb` text (the 413 limit);
//!   [`response_body_bytes`]: the bytes an answer takes in Lambda's response (its 6 MB limit).
//!
//! Parsing never panics, whatever the input (property-tested).

mod activity;
mod answer;
mod attempts;
mod bodies;
mod callback;
mod codes;
mod delivery;
mod fields;
mod hash;
mod history;
mod holds;
mod ids;
pub mod limits;
mod listing;
mod many;
mod operations;
mod output;
mod problems;
mod prompt;
mod read_cost;
mod request;
mod response_size;
mod schema;
mod schema_check;
mod stored_size;
mod summary;

pub use activity::{
    Activity, ActivityBucket, ActivityQuery, ActivityWindow, FailureCount, Histogram, ModelActivity,
    Percentiles, ACTIVITY_BUCKETS, ACTIVITY_BUCKETS_MAX, ACTIVITY_BUCKET_DEFAULT, ACTIVITY_KEPT_DAYS,
    ACTIVITY_MINUTES_KEPT_HOURS, ACTIVITY_MINUTE_WINDOW_HOURS, ACTIVITY_ROWS_MAX, ACTIVITY_WINDOW_MAX_DAYS,
    HISTOGRAM_BINS,
};
pub use answer::check_answer;
pub use attempts::{AttemptOutcome, AttemptUsage, TaskAttempt, TaskAttempts};
pub use bodies::{parse_json, Budget, CreateRun, CreateTask, Owner, Release, Scope, UsageSubject};
pub use callback::{Callback, LAMBDA_DURABLE, STEP_FUNCTIONS};
pub use codes::{ErrorCode, RunState, TaskStatus};
pub use delivery::{parse_duration, DeliveryMode, DEFERRED_MAX_WITHIN, DEFERRED_MIN_WITHIN};
pub use hash::{canonical_hash, canonical_json};
pub use history::{
    ListRuns, ListedRun, RunPage, RunProgress, RunsQuery, TaskBatch, TaskCallback, TaskCallbacks, TaskCounts,
    TaskEvent, TaskEvents,
};
pub use holds::{
    HoldAnswer, HoldOn, HoldPage, HoldTargetAnswer, HoldsQuery, ListHolds, PlaceHold, HOLD_PAGE_MAX,
    HOLD_REASON_MAX_CHARS,
};
pub use ids::{AppId, EffectKey, IdempotencyKey, RunId, TaskId, APP_ID_MAX_CHARS, IDEMPOTENCY_KEY_MAX_CHARS};
pub use limits::*;
pub use listing::{ListQuery, ListTasks, TaskFilter};
pub use many::{item_value, CreateMany};
pub use operations::{
    derived_replay_key, skip, CreateOperation, ListOperations, Operation, OperationAction, OperationFilter,
    OperationPage, OperationState, OperationsQuery, ReplayTask, TaskReplay, TaskReplays, OPERATION_PAGE_MAX,
};
pub use output::{OutputCursor, TaskOutput, OUTPUT_OFFSET_MAX, OUTPUT_READ_MAX_BYTES};
pub use problems::{Path, Problem, Problems};
pub use prompt::{max_output_tokens, system_prompt, user_message};
pub use read_cost::ReadCost;
pub use request::{AiRequest, Classify, ClassifyMany, ExtractData, FieldSpec, FieldType, GenerateText, Kind};
pub use response_size::{escaped_json_bytes, oversized_output, response_body_bytes};
pub use schema::{answer_schema, answer_schema_for, schema_name, SchemaDialect};
pub use schema_check::schema_problems;
pub use stored_size::stored_size;
pub use summary::{DailyCost, StatusCounts, SummaryQuery, SummaryWindow, TenantSummary};

/// The request hash stored on a task (`inputHash`).
pub fn request_hash(request: &AiRequest) -> String {
    canonical_hash(&request.to_value())
}
