-- A worker stores a validated output: its running attempt ends `succeeded`, in one statement
-- with everything that goes with it, and only the completion event comes back (the worker holds
-- the task already; shipping the row back cost a tenth of the lifecycle's throughput).
--
-- Fenced on the lease (fragments/attempt_fence.sql): nothing changes unless the task is still
-- running this attempt (in the provider batch that holds it, or on-demand in none) and no cancel
-- was requested. For a scoped
-- task (cache_key set) the same statement lowers the application's count of active scoped tasks
-- in the shard of its scope; it frees no logical step (a success keeps it, so the bookkeeping's
-- first part, fragments/free_steps.sql, is left out). complete_attempt_unscoped.sql is the cheaper form
-- for tasks without a scope.
WITH settled AS (
    UPDATE tasks
    SET status = 'succeeded', output = :output, usage = :usage, error_code = NULL,
        error_message = NULL, completed_at = now(), updated_at = now()
    WHERE {{fragments/attempt_fence}}
    RETURNING id, app_id, scope_id, cache_key, status,
        {{fragments/settled_event}} AS payload
),
{{fragments/lower_active}}
-- The transactional outbox: the event commits with the transition.
INSERT INTO task_events (task_id, app_id, payload)
SELECT id, app_id, payload FROM settled
RETURNING id, task_id, payload
