-- Give back what a claim took after its worker stopped waiting for the answer (the claim
-- committed too late for the invocation to work on it): queued again with the attempt
-- uncounted, its message owed by the delivery that comes back. Only the rows that claim marked
-- (:claim_token) and that are still running untouched; locked in id order.
UPDATE tasks
SET status = 'queued', attempts = attempts - 1, heartbeat_at = NULL, message_sent_at = now(),
    claim_token = NULL, updated_at = now()
WHERE id IN (
    SELECT id FROM tasks
    WHERE id = ANY(:task_ids::uuid[]) AND status = 'running' AND claim_token = :claim_token
    ORDER BY id
    FOR UPDATE)
