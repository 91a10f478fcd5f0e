-- A page of one profile's tasks awaiting a batch, sent on-demand: the profile no longer batches
-- (`AITASK_MODELS` changed since they were created). Marked sent; the batcher sends them.
UPDATE tasks SET awaiting_batch = false, message_sent_at = now(), updated_at = now()
WHERE id IN (
    SELECT id FROM tasks
    WHERE status = 'queued' AND awaiting_batch AND model_id = :profile
    ORDER BY created_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED)
RETURNING id, app_id
