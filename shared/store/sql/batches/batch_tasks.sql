-- The tasks still running in a batch, with what a result needs to settle each: its request (to
-- build the batch's lines, and to check an answer), its lease, and its attempt budget and window
-- (to decide a failed line's retry) (tasks_in_batch_idx).
SELECT id, app_id, request, attempts, max_attempts, cache_key IS NOT NULL AS scoped, created_at,
    deferred_by
FROM tasks
WHERE batch_id = :batch_id AND status = 'running'
ORDER BY id
