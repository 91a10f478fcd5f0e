-- The events queue acknowledged these events.
UPDATE task_events SET delivered_at = now() WHERE id = ANY(:event_ids) AND delivered_at IS NULL
