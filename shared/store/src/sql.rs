//! Statement building blocks shared by the operations.

/// The completion event body (docs/events.md), built from a task row in SQL so that the payload
/// stored in the outbox is exactly what is published.
macro_rules! event_payload {
    () => {
        "jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id, \
         'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status, \
         'errorCode', error_code, \
         'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))"
    };
}
pub(crate) use event_payload;

/// `'queued'` for a statement that addresses tasks by id (`status = ` this). ANALYZE samples
/// 30,000 rows, so on a big table it records the partial indexes over queued tasks as empty,
/// and the planner would then scan one of them, filtering on `id`, instead of descending the
/// primary key. A value the planner cannot see (an init plan) keeps those indexes out of the
/// choice. The growth study checks it (docs/growth/PLANS.md, "believed empty").
macro_rules! queued {
    () => {
        "(SELECT 'queued'::text)"
    };
}
pub(crate) use queued;

/// For the `RETURNING` list of a write whose loss in a crash is harmless: its transaction then
/// commits without waiting for the WAL flush (`synchronous_commit = off` for this transaction
/// only; evaluated only when a row was written). Used by the claim, the heartbeat and the
/// message mark:
/// - a lost heartbeat is an older `heartbeat_at`, and the sweeper waits three intervals;
/// - a lost claim puts the task back in the queue with its attempt uncounted. Its worker's next
///   cancel poll (fenced on status and attempt) finds the lease gone within half a second and
///   stops; the task can only be claimed again later, from the sweeper's re-send, and the next
///   claim hands out the same attempt number. Settlement stays exactly once either way: it is
///   fenced on the task still running;
/// - a lost message mark makes the sweeper send the message again, and the duplicate claims
///   nothing.
///
/// A create and a settlement still wait: the caller was answered, or the completion event is
/// published, once they commit. Every synchronous commit flushes all WAL before it, so an
/// asynchronous one is at risk only until the next flush (at most 3 × `wal_writer_delay`).
/// The point: at 64 clients the lifecycle spent most of its time waiting for WAL flushes
/// (BENCHMARKS.md), and this halves the flushes a task waits for.
macro_rules! commit_without_flush_wait {
    () => {
        "set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait"
    };
}
pub(crate) use commit_without_flush_wait;

/// The outbox write of [`with_settlement`]: one event for every row `settled` made terminal.
macro_rules! settled_events {
    () => {
        concat!(
            "events AS (INSERT INTO task_events (task_id, app_id, payload) SELECT id, app_id, ",
            $crate::sql::event_payload!(),
            " FROM settled WHERE status IN ('succeeded', 'failed', 'canceled') \
             RETURNING id, task_id, payload)"
        )
    };
}
pub(crate) use settled_events;

/// The rows [`with_settlement`] returns: each settled task with its event (if any).
macro_rules! settled_rows {
    () => {
        "SELECT settled.*, events.id AS event_id, events.payload AS event_payload \
         FROM settled LEFT JOIN events ON events.task_id = settled.id"
    };
}
pub(crate) use settled_rows;

/// Turn an `UPDATE tasks ...` into one statement that also, for every row it made terminal,
/// writes the completion event (transactional outbox), lowers the application's count of
/// active scoped tasks (in the shard of the task's scope), and, for failed or canceled scoped tasks, frees the logical step in
/// the admission history. Rows come back with `event_id` and
/// `event_payload` (NULL for rows the update left non-terminal).
///
/// The optional first argument adds CTEs before the update (for example a `SKIP LOCKED`
/// candidate list); it must end with a comma. `unscoped:` is the cheaper form for one task
/// known not to be scoped: it only writes the event (and matches nothing if the task is
/// scoped after all), sparing two statements' worth of executor work on every settlement.
macro_rules! with_settlement {
    ($update:expr) => {
        $crate::sql::with_settlement!("", $update)
    };
    (unscoped: $update:expr) => {
        concat!(
            "WITH settled AS (",
            $update,
            " AND cache_key IS NULL RETURNING ",
            $crate::model::task_columns!(),
            "), ",
            $crate::sql::settled_events!(),
            " ",
            $crate::sql::settled_rows!()
        )
    };
    ($ctes:expr, $update:expr) => {
        concat!(
            "WITH ",
            $ctes,
            " settled AS (",
            $update,
            " RETURNING ",
            $crate::model::task_columns!(),
            "), ",
            $crate::sql::settled_events!(),
            $crate::sql::settled_bookkeeping!(),
            " ",
            $crate::sql::settled_rows!()
        )
    };
}
pub(crate) use with_settlement;

/// The admission bookkeeping of a settlement over the `settled` CTE (which must return `id`,
/// `app_id`, `scope_id`, `cache_key` and `status`): free the logical step of a failed or
/// canceled task, and lower the application's count of active scoped tasks in the shard of the
/// task's scope. Starts with a comma.
macro_rules! settled_bookkeeping {
    () => {
        ", freed AS (UPDATE scope_admissions SET logical_key = NULL WHERE task_id IN \
         (SELECT id FROM settled WHERE status IN ('failed', 'canceled'))), \
         ended AS (UPDATE app_concurrency SET active = GREATEST(active - ended_count, 0) \
         FROM (SELECT app_id AS ended_app, scope_shard(scope_id) AS ended_shard, \
         count(*)::int AS ended_count FROM settled \
         WHERE cache_key IS NOT NULL AND status IN ('succeeded', 'failed', 'canceled') \
         GROUP BY 1, 2) ended_rows \
         WHERE app_concurrency.app_id = ended_app AND app_concurrency.shard = ended_shard)"
    };
}
pub(crate) use settled_bookkeeping;

/// A worker's settlement of its own attempt (`$update` makes one running task terminal), in
/// one statement that returns only the completion event it wrote: `id`, `task_id`, `payload`.
/// The worker already holds the task, and shipping the whole row back (the request included)
/// cost about a tenth of the lifecycle's throughput at 64 clients (BENCHMARKS.md). The payload
/// is built in the update's `RETURNING`, from the row as it now is. `unscoped:` skips the
/// admission bookkeeping, as in [`with_settlement`].
macro_rules! with_settled_event {
    ($update:expr) => {
        concat!(
            $crate::sql::settled_with_payload!($update, ""),
            $crate::sql::settled_bookkeeping!(),
            $crate::sql::settled_event_insert!()
        )
    };
    (unscoped: $update:expr) => {
        concat!(
            $crate::sql::settled_with_payload!($update, " AND cache_key IS NULL"),
            $crate::sql::settled_event_insert!()
        )
    };
}
pub(crate) use with_settled_event;

/// The `settled` CTE of [`with_settled_event`]: `$update` (narrowed by `$filter`) returning what
/// the bookkeeping needs and the completion event's payload, built from the row as it now is.
macro_rules! settled_with_payload {
    ($update:expr, $filter:expr) => {
        concat!(
            "WITH settled AS (",
            $update,
            $filter,
            " RETURNING id, app_id, scope_id, cache_key, status, ",
            $crate::sql::event_payload!(),
            " AS payload)"
        )
    };
}
pub(crate) use settled_with_payload;

/// The main statement of [`with_settled_event`]: the outbox row for the settled task.
macro_rules! settled_event_insert {
    () => {
        " INSERT INTO task_events (task_id, app_id, payload) SELECT id, app_id, payload FROM settled \
         RETURNING id, task_id, payload"
    };
}
pub(crate) use settled_event_insert;

/// The SET clause of a cancellation request: a queued task ends `canceled` at once, a running
/// one is flagged and its worker settles it when it notices (within a cancel poll).
macro_rules! cancel_request_set {
    () => {
        "cancel_requested_at = COALESCE(cancel_requested_at, now()), \
         status = CASE WHEN status = 'queued' THEN 'canceled' ELSE status END, \
         completed_at = CASE WHEN status = 'queued' THEN now() ELSE completed_at END, \
         error_code = CASE WHEN status = 'queued' THEN 'WORKFLOW_AI_CANCELED' ELSE error_code END, \
         error_message = CASE WHEN status = 'queued' THEN 'The task was canceled.' \
                         ELSE error_message END, \
         updated_at = now()"
    };
}
pub(crate) use cancel_request_set;

/// Error messages are stored truncated to the column's limit (characters, not bytes).
pub(crate) fn truncate_message(message: &str) -> String {
    message.chars().take(crate::ERROR_MESSAGE_MAX_CHARS).collect()
}

/// Split settled rows into the terminal ones (with their event) and the rest.
pub(crate) fn split_settled(
    rows: &[tokio_postgres::Row],
) -> crate::StoreResult<(Vec<crate::Settled>, Vec<crate::Task>)> {
    let mut settled = Vec::new();
    let mut other = Vec::new();
    for row in rows {
        if row.try_get::<_, Option<i64>>("event_id")?.is_some() {
            settled.push(crate::model::settled_from_row(row)?);
        } else {
            other.push(crate::Task::from_row(row)?);
        }
    }
    Ok((settled, other))
}

/// A duration as the `bigint` milliseconds the statements take.
pub(crate) fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A batch size as the `bigint` a `LIMIT` takes.
pub(crate) fn limit(batch: usize) -> i64 {
    i64::try_from(batch).unwrap_or(i64::MAX)
}
