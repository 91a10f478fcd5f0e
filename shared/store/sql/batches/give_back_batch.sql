-- The tasks still running in a batch that will not answer for them (it failed, expired, was
-- given up near their window's end, or its results named them not): back to the queue for
-- the on-demand path, the batch's attempt uncounted (it was not theirs to spend), their message
-- marked sent here and sent by the batcher. Locked in id order, as every statement that locks
-- several tasks.
WITH locked AS (
    SELECT id AS locked_id FROM tasks
    WHERE batch_id = :batch_id AND status = 'running'
    ORDER BY id
    FOR UPDATE
)
UPDATE tasks
SET status = 'queued', attempts = attempts - 1, batch_lease_until = NULL, batch_id = NULL,
    message_sent_at = now(), updated_at = now()
FROM locked
WHERE id = locked_id AND status = 'running' AND cancel_requested_at IS NULL
RETURNING id, app_id
