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
SET {{fragments/cancel_set}}
FROM candidates WHERE id = candidate_id
RETURNING id, {{fragments/ended_event}}
