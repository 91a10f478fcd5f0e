-- A batch's answers that passed the checks, for its unscoped tasks: settle/complete_many.sql
-- fenced on the batch as well as the attempt (item i of each array is task i). Only the batch
-- that holds the task now (`batch_id`) settles it: a late or duplicate result of a batch the task
-- has left (given back, then claimed on-demand or taken by a newer batch with the same attempt
-- number) changes nothing. Locked in id order, as every statement that locks several tasks.
WITH given AS (
    SELECT * FROM unnest(:task_ids::uuid[], :attempts::int[], :outputs::jsonb[], :usages::jsonb[])
        AS given(task_id, attempt, new_output, new_usage)
),
locked AS (
    SELECT id AS locked_id FROM tasks WHERE id = ANY(:task_ids::uuid[]) ORDER BY id FOR UPDATE
),
settled AS (
    UPDATE tasks
    SET status = 'succeeded', output = given.new_output, usage = given.new_usage, error_code = NULL,
        error_message = NULL, completed_at = now(), updated_at = now()
    FROM given JOIN locked ON locked_id = given.task_id
    WHERE tasks.id = given.task_id AND tasks.status = 'running' AND tasks.attempts = given.attempt
      AND tasks.batch_id = :batch_id AND tasks.cancel_requested_at IS NULL AND tasks.cache_key IS NULL
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
