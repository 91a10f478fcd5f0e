-- The end of a statement that ends whole tasks (its `settled` answers fragments/task_columns.sql):
-- the outbox rows and the admission bookkeeping of the tasks that ended, then every row the
-- update touched, with its event when it became terminal (NULL when it was only flagged). The one
-- home of this part: the loader writes it out in every statement that names it (src/statement.rs).
{{fragments/ended_events}},
{{fragments/free_steps}},
{{fragments/lower_active}}
SELECT settled.*, events.id AS event_id, events.payload AS event_payload
FROM settled LEFT JOIN events ON events.task_id = settled.id
