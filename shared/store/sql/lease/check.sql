-- A worker's cancel poll: is the lease still ours, and was a cancel requested?
SELECT cancel_requested_at IS NOT NULL AS cancel_requested FROM tasks
WHERE id = :task_id AND status = 'running' AND attempts = :attempt
