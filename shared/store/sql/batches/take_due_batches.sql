-- Open batches due for a look (a submit to make or retry, a status to poll), held for :lease_ms
-- so that a concurrent batcher passes them by; the lease lapses if this one dies. Bounded, SKIP
-- LOCKED (task_batches_due_idx).
UPDATE task_batches SET due_at = now() + :lease_ms::bigint * interval '1 millisecond', tries = tries + 1
WHERE id IN (
    SELECT id FROM task_batches
    WHERE state <> 'ended' AND due_at <= now()
    ORDER BY due_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED)
RETURNING id, profile, provider, state, provider_batch_id, records, give_up_at, tries, created_at,
    give_up_at <= now() AS given_up, submits, submit_sent_at
