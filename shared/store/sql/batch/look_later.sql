-- Look at a batch again after :after_ms (a poll that found it working, a submit or a poll that
-- failed: its error is kept for the record), and no later than its give-up time.
UPDATE task_batches
SET due_at = LEAST(now() + :after_ms::bigint * interval '1 millisecond', give_up_at),
    last_error = COALESCE(:error, last_error)
WHERE id = :batch_id AND state <> 'ended'
