-- Give a claimed task back unworked (a provider limit was reached before any call): queued
-- again with its attempt uncounted, its message visible after the worker's delay. Fenced on the
-- lease (complete_attempt.sql), and on no cancel having been requested (that is settled instead).
UPDATE tasks
SET status = 'queued', attempts = attempts - 1, heartbeat_at = NULL, batch_id = NULL,
    message_sent_at = now(), updated_at = now()
WHERE id = :task_id AND status = 'running' AND attempts = :attempt AND cancel_requested_at IS NULL
  AND batch_id IS NOT DISTINCT FROM :batch_id
