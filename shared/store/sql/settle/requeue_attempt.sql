-- Put a running task back in the queue after a retryable failure, keeping the error for the
-- record. Matches nothing when the lease is gone (the batch too: fragments/attempt_fence.sql), a cancel
-- was requested, or the budget is spent. The retry is on-demand: a batch's task leaves its batch.
-- message_sent_at is now: the worker's own message (or the batcher's) comes after the backoff.
UPDATE tasks
SET status = 'queued', heartbeat_at = NULL, batch_lease_until = NULL, error_code = :error_code,
    error_message = :error_message,
    batch_id = NULL, message_sent_at = now(), updated_at = now()
WHERE {{fragments/attempt_fence}} AND attempts < max_attempts
