-- A page of batches ended longer ago than :older_than_ms, deleted (their tasks keep their own
-- record), once nothing of them is left at the provider (cleanup_due_at NULL). Bounded, SKIP
-- LOCKED (task_batches_ended_idx).
DELETE FROM task_batches WHERE id IN (
    SELECT id FROM task_batches
    WHERE state = 'ended' AND ended_at < now() - :older_than_ms::bigint * interval '1 millisecond'
      AND cleanup_due_at IS NULL
    ORDER BY ended_at LIMIT :page
    FOR UPDATE SKIP LOCKED)
