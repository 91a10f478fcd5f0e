-- mark_sent.sql for the messages of a batch, sent with SendMessageBatch: one statement for all.
UPDATE tasks SET message_sent_at = now()
WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
RETURNING set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
