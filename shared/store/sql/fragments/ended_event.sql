-- The completion event of a row the statement ended, for its caller to publish after the commit:
-- `event_id` and `event_payload`, NULL for a row that did not end (requeued, or a running task
-- only flagged for a cancel). The trigger on `tasks` wrote the event (migrations/V38, "what
-- follows a change of a task's status") and keeps its id on the row; the payload is the same
-- function's. Every statement that can end a task answers this (src/statement.rs).
ended_event_id AS event_id,
    task_event_payload(id, app_id, run_id, step_key, effect_key, status, error_code, completed_at)
        AS event_payload
