-- These tasks' messages are owed again (a send failed). Rows locked in id order, as every
-- statement that locks several tasks locks them.
UPDATE tasks SET message_sent_at = NULL
WHERE id IN (SELECT id FROM tasks WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
             ORDER BY id FOR UPDATE)
