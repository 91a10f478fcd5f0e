-- A worker ends its running attempt `failed` with an error code; only the completion event comes
-- back. Fenced on the lease (fragments/attempt_fence.sql). What follows the ending (the event,
-- callbacks owed, a scoped task's step freed and count lowered) is written by the trigger on
-- `tasks` (migrations/V38).
UPDATE tasks
SET status = 'failed', output = NULL, error_code = :error_code, error_message = :error_message,
    completed_at = now(), updated_at = now()
WHERE {{fragments/attempt_fence}}
RETURNING id, {{fragments/ended_event}}
