-- The clean-up of an ended batch is done (:after_ms NULL: nothing of it left at the provider, or
-- given up), or is tried again after :after_ms (the provider still finishing it, a failed call).
UPDATE task_batches
SET cleanup_due_at = now() + :after_ms::bigint * interval '1 millisecond',
    last_error = COALESCE(:error, last_error)
WHERE id = :batch_id AND state = 'ended'
