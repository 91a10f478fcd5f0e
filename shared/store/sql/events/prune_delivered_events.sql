-- Delivered events older than :older_than_ms go, a bounded page at a time.
DELETE FROM task_events WHERE id IN (
    SELECT id FROM task_events
    WHERE delivered_at < now() - :older_than_ms::bigint * interval '1 millisecond'
    ORDER BY delivered_at LIMIT :page
    FOR UPDATE SKIP LOCKED)
