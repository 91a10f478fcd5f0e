-- The provider has the batch: its id is recorded, and the first poll is due after :poll_ms.
UPDATE task_batches
SET state = 'submitted', provider_batch_id = :provider_batch_id, submitted_at = now(),
    due_at = now() + :poll_ms::bigint * interval '1 millisecond', last_error = NULL
WHERE id = :batch_id AND state = 'submitting'
