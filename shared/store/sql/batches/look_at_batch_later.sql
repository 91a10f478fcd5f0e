-- Look at a batch again after :after_ms (a poll that found it working, a submit or a poll that
-- failed: its error is kept for the record), and no later than its give-up time; once that has
-- passed (a given-up batch waiting for its partial results), after :after_ms.
UPDATE task_batches
SET due_at = CASE WHEN give_up_at > now()
        THEN LEAST(now() + :after_ms::bigint * interval '1 millisecond', give_up_at)
        ELSE now() + :after_ms::bigint * interval '1 millisecond' END,
    last_error = COALESCE(:error, last_error)
WHERE id = :batch_id AND state <> 'ended'
