-- A run's cancel is finished once none of its unfinished tasks is left without it.
UPDATE runs SET tasks_cancel_pending = false
WHERE id = :run_id AND tasks_cancel_pending
  AND NOT EXISTS (SELECT 1 FROM tasks
                  WHERE run_id = :run_id AND status IN ('queued', 'running') AND cancel_requested_at IS NULL)
RETURNING id
