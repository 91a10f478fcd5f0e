-- What a cancel writes on a task it reaches (the SET list of cancel/request_cancel.sql,
-- cancel/cancel_run_tasks.sql and operations/cancel_operation_page.sql): the request is noted;
-- a queued task ends at once, and so does one in a provider batch (no worker watches it: its
-- result is fenced out when it comes); a running one is only flagged, and its worker settles it
-- when it notices (within a cancel poll).
cancel_requested_at = COALESCE(cancel_requested_at, now()),
    status = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'canceled' ELSE status END,
    completed_at = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN now() ELSE completed_at END,
    error_code = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN :canceled_code ELSE error_code END,
    error_message = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'The task was canceled.' ELSE error_message END,
    updated_at = now()
