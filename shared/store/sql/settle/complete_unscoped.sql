-- complete.sql for a task without a scope: no admission bookkeeping, which spares two
-- statements' worth of executor work on every settlement. It matches nothing if the task is
-- scoped after all (cache_key set), so it can never skip bookkeeping a scoped task needs.
WITH settled AS (
    UPDATE tasks
    SET status = 'succeeded', output = :output, usage = :usage, error_code = NULL,
        error_message = NULL, completed_at = now(), updated_at = now()
    WHERE id = :task_id AND status = 'running' AND attempts = :attempt
      AND batch_id IS NOT DISTINCT FROM :batch_id
      AND cancel_requested_at IS NULL AND cache_key IS NULL
    RETURNING id, app_id, scope_id, cache_key, status,
        jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id,
            'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status,
            'errorCode', error_code,
            'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
            AS payload
)
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
