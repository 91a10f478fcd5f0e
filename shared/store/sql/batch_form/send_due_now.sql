-- A page of tasks awaiting a batch whose window ends within :slack_ms: too late for a batch,
-- they run on-demand now, with that time to spare (tasks_queued_deadline_idx). Marked sent; the
-- batcher sends them.
UPDATE tasks SET awaiting_batch = false, message_sent_at = now(), updated_at = now()
WHERE id IN (
    SELECT id FROM tasks
    WHERE status = 'queued' AND deferred_by IS NOT NULL
      AND deferred_by < now() + :slack_ms::bigint * interval '1 millisecond' AND awaiting_batch
    ORDER BY deferred_by, created_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED)
RETURNING id, app_id
