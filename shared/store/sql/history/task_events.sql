-- A task's completion events (the outbox, task_events), oldest first, one more than a page holds
-- (so the answer knows there are more). One row with NULL event columns for a task of this
-- application without events; no row for a missing task or another application's. Reads
-- task_events_task_idx (migrations/V1).
SELECT t.id AS task_id, e.id AS event_id, e.payload->>'type' AS type, e.payload->>'status' AS status,
    e.created_at, e.delivered_at
FROM tasks t
LEFT JOIN LATERAL (
    SELECT id, payload, created_at, delivered_at FROM task_events
    WHERE task_id = t.id AND app_id = t.app_id
    ORDER BY id
    LIMIT :limit
) e ON true
WHERE t.id = :task_id AND t.app_id = :app_id
ORDER BY e.id
