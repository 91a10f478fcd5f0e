-- A page of waiting callbacks not heartbeated for :every_ms, shared between tenants, marked as
-- heartbeated now (the sweeper sends the heartbeats). Every tenant with waiting callbacks is
-- found by one probe of the index (a loose scan over app_id); each gives its least recently
-- heartbeated due callbacks, at most :page; the page takes them in turns (every tenant's
-- oldest, then every tenant's second oldest, ...), so a tenant with thousands waiting never
-- starves one with a few when the capacity is short. The rows are locked only once chosen, with
-- SKIP LOCKED, and the lock re-checks that they are still waiting and due (a concurrent sweeper
-- may have taken them). Each comes back with the heartbeat it had before (`last_heartbeat_at`):
-- a call AWS throttled puts it back (unmark_heartbeats.sql), so it is due again at once. One whose task has ended is owed instead: the outbox's trigger makes
-- callbacks owed with their task's transition, and this is where any callback that could still
-- be waiting then is found within a heartbeat.
{{fragments/waiting_tenants}},
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
    SELECT id, heartbeat_at FROM task_callbacks
    WHERE id IN (SELECT id FROM chosen) AND state = 'waiting'
      AND heartbeat_at <= now() - :every_ms::bigint * interval '1 millisecond'
    FOR UPDATE SKIP LOCKED
)
UPDATE task_callbacks
SET heartbeat_at = now(),
    state = CASE WHEN tasks.status IN ('succeeded', 'failed', 'canceled') THEN 'owed' ELSE 'waiting' END,
    due_at = CASE WHEN tasks.status IN ('succeeded', 'failed', 'canceled') THEN now() END
FROM taken, tasks
WHERE task_callbacks.id = taken.id
  AND tasks.id = task_callbacks.task_id
RETURNING task_callbacks.id, task_callbacks.task_id, task_callbacks.app_id, task_callbacks.kind,
    task_callbacks.token, task_callbacks.state, tasks.status,
    task_callbacks.heartbeat_at AS marked_at, taken.heartbeat_at AS last_heartbeat_at
