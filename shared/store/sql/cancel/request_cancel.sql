-- A caller asks to cancel one of its tasks.
UPDATE tasks
SET {{fragments/cancel_set}}
WHERE id = :task_id AND app_id = :app_id AND status IN ('queued', 'running')
RETURNING {{fragments/task_columns}}, {{fragments/ended_event}}
