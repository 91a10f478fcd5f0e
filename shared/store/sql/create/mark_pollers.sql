-- Creates without a callback that found their tasks by effect key: each caller reads its task
-- (GET, a long poll) and waits for it as long as it lives, so the task is never canceled for
-- want of callers (callbacks/cancel_abandoned.sql). Written once per task, and only while the
-- task can still end that way.
UPDATE tasks SET has_poller = true
WHERE id = ANY(:task_ids) AND NOT has_poller AND status NOT IN ('succeeded', 'failed', 'canceled')
