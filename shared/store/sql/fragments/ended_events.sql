-- The transactional outbox: one completion event for every row of the statement's `settled`
-- that is now terminal (a row a statement only flagged, such as a running task asked to cancel,
-- gets none). Answers each event's id, task_id and payload. The one home of this part: the loader
-- writes it out in every statement that names it, with the payload of
-- fragments/settled_event.sql (src/statement.rs).
events AS (
    INSERT INTO task_events (task_id, app_id, payload)
    SELECT id, app_id,
        {{fragments/settled_event}}
    FROM settled WHERE status IN ('succeeded', 'failed', 'canceled')
    RETURNING id, task_id, payload
)
