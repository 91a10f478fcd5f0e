-- A worker stores a validated output: its running attempt ends `succeeded`, and only the
-- completion event comes back (the worker holds the task already; shipping the row back cost a
-- tenth of the lifecycle's throughput). What follows the ending (the event, callbacks owed, a
-- scoped task's count) is written by the trigger on `tasks` (migrations/V38).
--
-- Fenced on the lease (fragments/attempt_fence.sql): nothing changes unless the task is still
-- running this attempt (in the provider batch that holds it, or on-demand in none) and no cancel
-- was requested. Its event is handed over to the caller's publish when :hand_over says so
-- (process-task: fragments/hand_over).
UPDATE tasks
SET status = 'succeeded', output = :output, usage = :usage, error_code = NULL,
    error_message = NULL, completed_at = now(), updated_at = now()
WHERE {{fragments/attempt_fence}}
    AND {{fragments/hand_over}}
RETURNING id, {{fragments/ended_event}}, {{fragments/owes_callbacks}}
