-- These tasks' messages are owed again (a send failed).
UPDATE tasks SET message_sent_at = NULL WHERE id = ANY(:task_ids) AND status = (SELECT 'queued'::text)
