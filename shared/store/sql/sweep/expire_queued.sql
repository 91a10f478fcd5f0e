-- Queued tasks created longer ago than the queue timeout end `failed` with
-- WORKFLOW_AI_QUEUE_TIMEOUT (`canceled` where a cancel was requested): the timeout bounds a
-- task's time in the system from its creation, so no number of give-backs or retries keeps it
-- alive. A deferred task's bound is its own window instead (`deferred_by`): awaiting a batch or
-- sent on-demand, it ends once that has passed. Both walks are ranges of
-- tasks_queued_deadline_idx (deferred_by, created_at, id): `deferred_by IS NULL` then
-- `created_at`, and `deferred_by`. Bounded pages chosen with SKIP LOCKED, so concurrent sweepers
-- share the work. A parked task (held: `message_sent_at = 'infinity'`, migrations/V34) does not
-- expire while held, and a released one's timeout counts from its release (`unheld_at`). The
-- walk passes the parked tasks older than the timeout by, row by row (no index on `tasks` tells
-- them apart: each one more is written by every task), so a long hold of many tasks makes each
-- sweep's walk that much longer.
WITH timed_out AS (
    SELECT id AS candidate_id FROM tasks
    WHERE status = 'queued' AND deferred_by IS NULL
      AND created_at < now() - :queue_timeout_ms::bigint * interval '1 millisecond'
      AND message_sent_at IS DISTINCT FROM 'infinity'
      AND (unheld_at IS NULL OR unheld_at < now() - :queue_timeout_ms::bigint * interval '1 millisecond')
    -- `deferred_by` first, though NULL in every row here: the index's own order, so the page is
    -- read in order and not sorted (IS NULL is no equality to the planner's sort keys).
    ORDER BY deferred_by, created_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED
),
out_of_window AS (
    SELECT id AS candidate_id FROM tasks
    WHERE status = 'queued' AND deferred_by IS NOT NULL AND deferred_by < now()
      AND message_sent_at IS DISTINCT FROM 'infinity'
      AND (unheld_at IS NULL OR unheld_at < now() - :queue_timeout_ms::bigint * interval '1 millisecond')
    ORDER BY deferred_by, created_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED
),
candidates AS (
    SELECT candidate_id FROM timed_out UNION ALL SELECT candidate_id FROM out_of_window
)
UPDATE tasks
SET status = CASE WHEN cancel_requested_at IS NOT NULL THEN 'canceled' ELSE 'failed' END,
    error_code = CASE WHEN cancel_requested_at IS NOT NULL THEN :canceled_code
                 ELSE :queue_timeout_code END,
    error_message = CASE WHEN cancel_requested_at IS NOT NULL THEN 'The task was canceled.'
                    WHEN deferred_by IS NOT NULL THEN 'The deferred task was not started within its window.'
                    ELSE 'The task was not started within the queue timeout of its creation.' END,
    awaiting_batch = false,
    output = NULL, completed_at = now(), updated_at = now()
FROM candidates WHERE id = candidate_id
RETURNING {{fragments/task_columns}}, {{fragments/ended_event}}
