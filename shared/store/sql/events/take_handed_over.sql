-- A task's SQS message came back after its task ended. If the task's event was handed over to
-- a publish (migrations/V41), that publish may have died with its worker before the event was
-- out (the invocation never answered, so its message came back): the event is taken back for
-- this worker to publish again now. It is written back as the outbox's, undelivered and hidden
-- from the sweeper for :lease_ms like the sweeper's own take, so the publish that follows marks
-- it delivered, and the sweeper sends it if that publish fails too. An event once taken back is
-- no longer `handed_over`: a later duplicate of the message takes nothing.
--
-- An event pruned already (delivered events are kept a day) cannot say whether it went out: a
-- message that comes back that late (a dead-letter queue redriven after a day) publishes it
-- again, as the trigger wrote it (`task_event_payload`, the same id), answered `rebuilt`: no row
-- stands behind it, so its message must stay until that publish goes through. A duplicate is
-- allowed, a loss is not. (The outbox is written by the trigger alone: no row is put back.)
WITH taken AS (
    UPDATE task_events
    SET delivered_at = NULL, handed_over = false,
        available_at = now() + :lease_ms::bigint * interval '1 millisecond'
    WHERE id = (SELECT ended_event_id FROM tasks WHERE id = :task_id) AND handed_over
    RETURNING id, task_id, payload
)
SELECT id, task_id, payload, false AS rebuilt FROM taken
UNION ALL
SELECT ended_event_id, id,
    task_event_payload(id, app_id, run_id, step_key, effect_key, status, error_code, completed_at),
    true
FROM tasks
WHERE id = :task_id AND ended_event_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM task_events WHERE task_events.id = tasks.ended_event_id)
