-- The completion event's payload (docs/events.md), built from the row of the task that ended as
-- it now is (its id, app_id, run_id, step_key, effect_key, status, error_code, completed_at).
-- The one home of this JSON: every statement that ends a task names this file where the payload
-- goes, and the loader writes it out there (src/statement.rs).
jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id,
    'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status,
    'errorCode', error_code,
    'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
