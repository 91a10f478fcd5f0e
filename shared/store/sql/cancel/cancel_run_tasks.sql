-- Up to :page of a canceled run's unfinished tasks get the cancel: a queued task ends at once,
-- a task in a provider batch (batch_id) too, its result discarded when it comes;
-- a running one is flagged and its worker settles it when it notices (within a cancel poll).
-- SKIP LOCKED: a task a worker is claiming right now is left to the next page. Only ids and
-- the events come back, never whole rows.
WITH candidates AS (
    SELECT id AS candidate_id FROM tasks
    WHERE run_id = :run_id AND status IN ('queued', 'running') AND cancel_requested_at IS NULL
    ORDER BY id LIMIT :page
    FOR UPDATE SKIP LOCKED
)
UPDATE tasks
SET cancel_requested_at = now(),
    status = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'canceled' ELSE status END,
    completed_at = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN now() ELSE completed_at END,
    error_code = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN :canceled_code ELSE error_code END,
    error_message = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'The task was canceled.' ELSE error_message END,
    updated_at = now()
FROM candidates WHERE id = candidate_id
RETURNING id, {{fragments/ended_event}}
