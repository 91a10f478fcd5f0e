-- End a task whose cancel was requested `canceled`, whoever notices first (its worker, a claim,
-- or the sweeper). Not fenced on an attempt: a requested cancel wins over any lease.
UPDATE tasks
SET status = 'canceled', output = NULL, error_code = :canceled_code,
    error_message = 'The task was canceled.', completed_at = now(), updated_at = now()
WHERE id = :task_id AND status IN ('queued', 'running') AND cancel_requested_at IS NOT NULL
RETURNING {{fragments/task_columns}}, {{fragments/ended_event}}
