-- A page of waiting callbacks not heartbeated for :every_ms, shared between tenants, marked as
-- heartbeated now (the sweeper sends the heartbeats). Every tenant with waiting callbacks is
-- found by one probe of the index (a loose scan over app_id); each gives its least recently
-- heartbeated due callbacks, at most :page; the page takes them in turns (every tenant's
-- oldest, then every tenant's second oldest, ...), so a tenant with thousands waiting never
-- starves one with a few when the capacity is short. The rows are locked only once chosen, with
-- SKIP LOCKED, and the lock re-checks that they are still waiting and due (a concurrent sweeper
-- may have taken them). One whose task has ended is owed instead: the outbox's trigger makes
-- callbacks owed with their task's transition, and this is where any callback that could still
-- be waiting then is found within a heartbeat.
WITH RECURSIVE tenants(app_id) AS (
    (SELECT app_id FROM task_callbacks WHERE state = 'waiting' ORDER BY app_id LIMIT 1)
    UNION ALL
    SELECT (SELECT next.app_id FROM task_callbacks next
            WHERE next.state = 'waiting' AND next.app_id > tenants.app_id
            ORDER BY next.app_id LIMIT 1)
    FROM tenants WHERE tenants.app_id IS NOT NULL
),
due AS (
    SELECT oldest.id, oldest.heartbeat_at,
        row_number() OVER (PARTITION BY tenants.app_id ORDER BY oldest.heartbeat_at, oldest.id) AS turn
    FROM tenants CROSS JOIN LATERAL (
        SELECT id, heartbeat_at FROM task_callbacks
        WHERE state = 'waiting' AND app_id = tenants.app_id
          AND heartbeat_at <= now() - :every_ms::bigint * interval '1 millisecond'
        ORDER BY heartbeat_at, id LIMIT :page
    ) oldest
    WHERE tenants.app_id IS NOT NULL
),
chosen AS (
    SELECT id FROM due ORDER BY turn, heartbeat_at, id LIMIT :page
),
taken AS (
    SELECT id FROM task_callbacks
    WHERE id IN (SELECT id FROM chosen) AND state = 'waiting'
      AND heartbeat_at <= now() - :every_ms::bigint * interval '1 millisecond'
    FOR UPDATE SKIP LOCKED
)
UPDATE task_callbacks
SET heartbeat_at = now(),
    state = CASE WHEN tasks.status IN ('succeeded', 'failed', 'canceled') THEN 'owed' ELSE 'waiting' END,
    due_at = CASE WHEN tasks.status IN ('succeeded', 'failed', 'canceled') THEN now() END
FROM tasks
WHERE task_callbacks.id IN (SELECT id FROM taken)
  AND tasks.id = task_callbacks.task_id
RETURNING task_callbacks.id, task_callbacks.task_id, task_callbacks.app_id, task_callbacks.kind,
    task_callbacks.token, task_callbacks.state, tasks.status
