-- A page of undelivered events whose grace has passed, hidden from other sweepers for
-- :lease_ms (events not marked delivered by then come back).
UPDATE task_events SET available_at = now() + :lease_ms::bigint * interval '1 millisecond'
WHERE id IN (SELECT id FROM task_events
             WHERE delivered_at IS NULL AND available_at <= now()
             ORDER BY available_at, id LIMIT :page
             FOR UPDATE SKIP LOCKED)
RETURNING id, task_id, payload
