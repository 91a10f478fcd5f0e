-- These tasks' messages are owed again (a send failed: a create's, or a sweeper's re-send). Rows
-- locked in id order, as every statement that locks several tasks locks them. A task parked under
-- a hold meanwhile (`message_sent_at = 'infinity'`: a send that failed at the client may still have
-- reached the queue, and its claim parked the task) stays parked: its hold's release sends it.
UPDATE tasks SET message_sent_at = NULL
WHERE id IN (SELECT id FROM tasks WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
             AND message_sent_at IS DISTINCT FROM 'infinity'
             ORDER BY id FOR UPDATE)
