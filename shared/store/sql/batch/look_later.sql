-- Look at a batch again after :after_ms (a poll that found it working, a submit or a poll that
-- failed: its error is kept for the record).
UPDATE task_batches
SET due_at = now() + :after_ms::bigint * interval '1 millisecond',
    last_error = COALESCE(:error, last_error)
WHERE id = :batch_id AND state <> 'ended'
