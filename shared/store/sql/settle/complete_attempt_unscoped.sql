-- complete_attempt.sql for a task without a scope: no admission bookkeeping, which spares two
-- statements' worth of executor work on every settlement. It matches nothing if the task is
-- scoped after all (cache_key set), so it can never skip bookkeeping a scoped task needs.
WITH settled AS (
    UPDATE tasks
    SET status = 'succeeded', output = :output, usage = :usage, error_code = NULL,
        error_message = NULL, completed_at = now(), updated_at = now()
    WHERE {{fragments/attempt_fence}} AND cache_key IS NULL
    RETURNING id, app_id, scope_id, cache_key, status,
        {{fragments/settled_event}} AS payload
)
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
