-- Give a claimed task back unworked (a provider limit was reached before any call): queued
-- again with its attempt uncounted, its message visible after the worker's delay. Fenced on the
-- lease (fragments/attempt_fence.sql), which also leaves alone a task whose cancel was requested
-- (that is settled instead).
UPDATE tasks
SET status = 'queued', attempts = attempts - 1, heartbeat_at = NULL, batch_lease_until = NULL, batch_id = NULL,
    message_sent_at = now(), updated_at = now()
WHERE {{fragments/attempt_fence}}
