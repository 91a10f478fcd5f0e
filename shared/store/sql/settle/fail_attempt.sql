-- A worker ends its running attempt `failed` with an error code, in one statement with the
-- completion event; only the event comes back. Fenced on the lease (fragments/attempt_fence.sql). For a
-- scoped task it also frees the logical step (a failure does not use up a source's budget) and
-- lowers the application's count of active scoped tasks. fail_attempt_unscoped.sql is the cheaper form
-- for tasks without a scope.
WITH settled AS (
    UPDATE tasks
    SET status = 'failed', output = NULL, error_code = :error_code, error_message = :error_message,
        completed_at = now(), updated_at = now()
    WHERE {{fragments/attempt_fence}}
    RETURNING id, app_id, scope_id, cache_key, status,
        {{fragments/settled_event}} AS payload
),
{{fragments/free_steps}},
{{fragments/lower_active}}
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
