-- The provider has the batch: its id is recorded, and the first poll is due after :poll_ms.
UPDATE task_batches
SET state = 'submitted', provider_batch_id = :provider_batch_id, submitted_at = now(),
    due_at = LEAST(now() + :poll_ms::bigint * interval '1 millisecond', give_up_at), last_error = NULL
WHERE id = :batch_id AND state = 'submitting'
