-- Ended batches whose provider copies are due for deletion, held for :lease_ms from other
-- sweepers; the lease lapses if this one dies. Bounded, SKIP LOCKED (task_batches_cleanup_idx).
UPDATE task_batches
SET cleanup_due_at = now() + :lease_ms::bigint * interval '1 millisecond', cleanup_tries = cleanup_tries + 1
WHERE id IN (
    SELECT id FROM task_batches
    WHERE state = 'ended' AND cleanup_due_at IS NOT NULL AND cleanup_due_at <= now()
    ORDER BY cleanup_due_at LIMIT :page
    FOR UPDATE SKIP LOCKED)
RETURNING id, profile, provider_batch_id, extra_batch_ids, cleanup_tries, records, submits,
    submit_sent_at, submitted_at
