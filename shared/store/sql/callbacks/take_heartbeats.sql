-- A page of waiting callbacks not heartbeated for :every_ms, least recently first, marked as
-- heartbeated now (the sweeper sends the heartbeats). One whose task has ended is owed instead:
-- the outbox's trigger makes callbacks owed with their task's transition, and this is where
-- any callback that could still be waiting then is found within a heartbeat.
UPDATE task_callbacks
SET heartbeat_at = now(),
    state = CASE WHEN tasks.status IN ('succeeded', 'failed', 'canceled') THEN 'owed' ELSE 'waiting' END,
    due_at = CASE WHEN tasks.status IN ('succeeded', 'failed', 'canceled') THEN now() END
FROM tasks
WHERE task_callbacks.id IN (SELECT id FROM task_callbacks
                            WHERE state = 'waiting'
                              AND heartbeat_at <= now() - :every_ms::bigint * interval '1 millisecond'
                            ORDER BY heartbeat_at, id LIMIT :page
                            FOR UPDATE SKIP LOCKED)
  AND tasks.id = task_callbacks.task_id
RETURNING task_callbacks.id, task_callbacks.task_id, task_callbacks.kind, task_callbacks.token,
    task_callbacks.state, tasks.status
