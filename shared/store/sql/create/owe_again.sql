-- These new tasks' messages did not go out (the send failed, or the request failed after the
-- insert and before its send): owed again, so the sweeper sends them after its grace
-- (sweep/take_unsent.sql). Only a task still as its insert left it (`message_sent_at =
-- created_at`: both the inserting transaction's now()): a send that failed at the client may
-- have reached the queue after all, and a worker may have claimed the task and then parked it
-- (`infinity`), given it back or requeued it with a delay; those stay as they are. Rows locked in
-- id order, as every statement that locks several tasks locks them.
UPDATE tasks SET message_sent_at = NULL
WHERE id IN (SELECT id FROM tasks WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
             AND message_sent_at = created_at
             ORDER BY id FOR UPDATE)
