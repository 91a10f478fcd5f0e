-- mark_sent.sql for the messages of a batch, sent with SendMessageBatch: one statement for all.
-- Rows locked in id order, as every statement that locks several tasks locks them.
UPDATE tasks SET message_sent_at = now()
WHERE id IN (SELECT id FROM tasks WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
             ORDER BY id FOR UPDATE)
RETURNING set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
