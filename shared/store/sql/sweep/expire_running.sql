-- Write what the sweeper decided for running tasks whose holder is gone (take_stale_running.sql):
-- item i of each array is one attempt and its ending, `queued` (a counted retry: the sweeper sends
-- its message after the backoff, so it is marked sent now), `failed` or `canceled`. Each is
-- written only if it is still running that attempt in the same batch (or none), still stale, and
-- a cancel was requested exactly when the ending is `canceled`; SKIP LOCKED, so a task a worker is
-- settling right now is left to it. What follows each change is written by the trigger on
-- `tasks` (migrations/V38).
WITH decided AS (
    SELECT * FROM unnest(:task_ids::uuid[], :attempts::int[], :batch_ids::uuid[], :statuses::text[],
        :error_codes::text[], :error_messages::text[])
        AS decided(task_id, attempt, given_batch_id, new_status, new_code, new_message)
),
candidates AS (
    SELECT id AS candidate_id FROM tasks JOIN decided ON id = decided.task_id
    WHERE id = ANY(:task_ids::uuid[]) AND status = 'running' AND attempts = decided.attempt
      AND batch_id IS NOT DISTINCT FROM decided.given_batch_id
      AND (cancel_requested_at IS NOT NULL) = (decided.new_status = 'canceled')
      AND (decided.new_status <> 'queued' OR attempts < max_attempts)
      AND ((batch_id IS NULL AND heartbeat_at < now() - :stale_after_ms::bigint * interval '1 millisecond')
           OR (batch_id IS NOT NULL AND batch_lease_until < now()))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
)
UPDATE tasks
SET status = decided.new_status, error_code = decided.new_code, error_message = decided.new_message,
    completed_at = CASE WHEN decided.new_status = 'queued' THEN NULL ELSE now() END,
    heartbeat_at = NULL, batch_lease_until = NULL, batch_id = NULL, output = NULL,
    message_sent_at = CASE WHEN decided.new_status = 'queued' THEN now() ELSE message_sent_at END,
    updated_at = now()
FROM decided JOIN candidates ON candidate_id = decided.task_id
WHERE tasks.id = ANY(:task_ids::uuid[]) AND tasks.id = decided.task_id
RETURNING {{fragments/task_columns}}, {{fragments/ended_event}}
