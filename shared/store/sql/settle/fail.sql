-- A worker ends its running attempt `failed` with an error code, in one statement with the
-- completion event; only the event comes back. Fenced on the lease like complete.sql. For a
-- scoped task it also frees the logical step (a failure does not use up a source's budget) and
-- lowers the application's count of active scoped tasks. fail_unscoped.sql is the cheaper form
-- for tasks without a scope.
WITH settled AS (
    UPDATE tasks
    SET status = 'failed', output = NULL, error_code = :error_code, error_message = :error_message,
        completed_at = now(), updated_at = now()
    WHERE id = :task_id AND status = 'running' AND attempts = :attempt
      AND batch_id IS NOT DISTINCT FROM :batch_id
      AND cancel_requested_at IS NULL
    RETURNING id, app_id, scope_id, cache_key, status,
        jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id,
            'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status,
            'errorCode', error_code,
            'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
            AS payload
),
freed AS (
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
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
