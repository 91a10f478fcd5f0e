-- The cancel of an operation's page: the matched tasks (at most a page, all of the tenant),
-- locked in id order as every statement that writes several tasks locks them (waiting for a
-- worker's claim rather than skipping it: the walk does not come back), get the cancel as
-- cancel/request_cancel.sql gives it: a queued task ends at once (and one in a provider batch),
-- a running one is flagged and its worker settles it within a cancel poll. An ended task is
-- left as it is. Only ids and the events come back; the caller writes the page's counts in the
-- same transaction (advance_operation.sql).
WITH candidates AS (
    SELECT id AS candidate_id FROM tasks
    WHERE id = ANY(:task_ids::uuid[]) AND app_id = :app_id
    ORDER BY id
    FOR UPDATE
)
UPDATE tasks
SET {{fragments/cancel_set}}
FROM candidates WHERE id = candidate_id AND status IN ('queued', 'running')
RETURNING id, {{fragments/ended_event}}
