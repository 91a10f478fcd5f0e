-- Why claim_by.sql did not claim these tasks: a duplicate delivery (running or terminal), a
-- requested cancel, a deleted task (a missing id has no row), or a queued task it skipped
-- because another transaction held its row right then (busy: its record comes back soon).
SELECT id, status, cancel_requested_at IS NOT NULL AS cancel_requested FROM tasks
WHERE id = ANY(:task_ids::uuid[])
