-- Creates without a callback that found their tasks by effect key: each caller reads its task
-- (GET, a long poll) and waits for it as long as it lives, so the task is never canceled for
-- want of callers (callbacks/cancel_abandoned.sql). Written once per task, and only while the
-- task can still end that way. The rows are locked in id order, as every statement that
-- writes several tasks locks them, so two of them never deadlock.
UPDATE tasks SET has_poller = true
WHERE id IN (SELECT id FROM tasks
             WHERE id = ANY(:task_ids::uuid[]) AND NOT has_poller
               AND status NOT IN ('succeeded', 'failed', 'canceled')
             ORDER BY id FOR UPDATE)
