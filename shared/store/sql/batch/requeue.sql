-- A batch line's retryable error: the task goes back to the queue for an on-demand retry, its
-- attempt counted and the error kept for the record (settle/requeue.sql), no longer the batch's.
-- Fenced on the batch as well as the attempt (batch/complete_many.sql); matches nothing when a
-- cancel was requested or the budget is spent. message_sent_at is now: the batcher sends the
-- message after the backoff.
UPDATE tasks
SET status = 'queued', heartbeat_at = NULL, error_code = :error_code, error_message = :error_message,
    batch_id = NULL, message_sent_at = now(), updated_at = now()
WHERE id = :task_id AND status = 'running' AND attempts = :attempt AND batch_id = :batch_id
  AND cancel_requested_at IS NULL AND attempts < max_attempts
