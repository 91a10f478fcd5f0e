-- fail_attempt.sql for a task without a scope: no admission bookkeeping; matches nothing if the task is
-- scoped after all.
WITH settled AS (
    UPDATE tasks
    SET status = 'failed', output = NULL, error_code = :error_code, error_message = :error_message,
        completed_at = now(), updated_at = now()
    WHERE {{fragments/attempt_fence}} AND cache_key IS NULL
    RETURNING id, app_id, scope_id, cache_key, status,
        {{fragments/settled_event}} AS payload
)
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
