-- Put a running task back in the queue after a retryable failure, keeping the error for the
-- record. Matches nothing when the lease is gone, a cancel was requested, or the budget is spent.
-- message_sent_at is now: the worker's own message comes back after the backoff.
UPDATE tasks
SET status = 'queued', heartbeat_at = NULL, error_code = :error_code, error_message = :error_message,
    message_sent_at = now(), updated_at = now()
WHERE id = :task_id AND status = 'running' AND attempts = :attempt
  AND cancel_requested_at IS NULL AND attempts < max_attempts
