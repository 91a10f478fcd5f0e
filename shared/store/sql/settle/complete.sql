-- A worker stores a validated output: its running attempt ends `succeeded`, in one statement
-- with everything that goes with it, and only the completion event comes back (the worker holds
-- the task already; shipping the row back cost a tenth of the lifecycle's throughput).
--
-- Fenced on the lease: nothing changes unless the task is still running this attempt (in the
-- provider batch that holds it, or on-demand in none) and no cancel was requested. For a scoped task (cache_key set) the same statement frees nothing (a
-- success keeps its logical step) but lowers the application's count of active scoped tasks in
-- the shard of its scope. complete_unscoped.sql is the cheaper form for tasks without a scope.
WITH settled AS (
    UPDATE tasks
    SET status = 'succeeded', output = :output, usage = :usage, error_code = NULL,
        error_message = NULL, completed_at = now(), updated_at = now()
    WHERE id = :task_id AND status = 'running' AND attempts = :attempt
      AND batch_id IS NOT DISTINCT FROM :batch_id
      AND cancel_requested_at IS NULL
    RETURNING id, app_id, scope_id, cache_key, status,
        -- The completion event (docs/events.md), built from the row as it now is.
        jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id,
            'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status,
            'errorCode', error_code,
            'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
            AS payload
),
freed AS (
    -- A failed or canceled scoped task frees its logical step (none here: this one succeeded).
    UPDATE scope_admissions SET logical_key = NULL
    WHERE task_id IN (SELECT id FROM settled WHERE status IN ('failed', 'canceled'))
),
ended AS (
    UPDATE app_concurrency SET active = GREATEST(active - ended_count, 0)
    FROM (SELECT app_id AS ended_app, scope_shard(scope_id) AS ended_shard, count(*)::int AS ended_count
          FROM settled
          WHERE cache_key IS NOT NULL AND status IN ('succeeded', 'failed', 'canceled')
          GROUP BY 1, 2) ended_rows
    WHERE app_concurrency.app_id = ended_app AND app_concurrency.shard = ended_shard
)
-- The transactional outbox: the event commits with the transition.
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
