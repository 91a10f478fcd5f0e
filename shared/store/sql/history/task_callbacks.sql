-- A task's callbacks, oldest first, one more than a page holds: kind, state and times, never the
-- token nor its hash. One row with NULL callback columns for a task of this application
-- without callbacks; no row for a missing task or another application's. Reads
-- task_callbacks_token_unique (task_id, token_hash).
SELECT t.id AS task_id, c.id AS callback_id, c.kind, c.state, c.created_at, c.heartbeat_at, c.due_at,
    c.ended_at, c.tries
FROM tasks t
LEFT JOIN LATERAL (
    SELECT id, kind, state, created_at, heartbeat_at, due_at, ended_at, tries FROM task_callbacks
    WHERE task_id = t.id
    ORDER BY id
    LIMIT :limit
) c ON true
WHERE t.id = :task_id AND t.app_id = :app_id
ORDER BY c.id
