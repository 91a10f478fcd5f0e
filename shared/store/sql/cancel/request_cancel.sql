-- A caller asks to cancel one of its tasks.
UPDATE tasks
SET cancel_requested_at = COALESCE(cancel_requested_at, now()),
    -- A queued task ends at once, and so does one in a provider batch (no worker watches it:
    -- its result is fenced out when it comes); a running one is flagged and its worker settles it when it
    -- notices (within a cancel poll).
    status = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'canceled' ELSE status END,
    completed_at = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN now() ELSE completed_at END,
    error_code = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN :canceled_code ELSE error_code END,
    error_message = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'The task was canceled.' ELSE error_message END,
    updated_at = now()
WHERE id = :task_id AND app_id = :app_id AND status IN ('queued', 'running')
RETURNING {{fragments/task_columns}}, {{fragments/ended_event}}
