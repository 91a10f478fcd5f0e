-- `tenants(app_id)`: every tenant with waiting callbacks, found by one probe each of
-- task_callbacks_waiting_idx (a loose scan over app_id, migrations/V22), ending in one NULL row.
WITH RECURSIVE tenants(app_id) AS (
    (SELECT app_id FROM task_callbacks WHERE state = 'waiting' ORDER BY app_id LIMIT 1)
    UNION ALL
    SELECT (SELECT next.app_id FROM task_callbacks next
            WHERE next.state = 'waiting' AND next.app_id > tenants.app_id
            ORDER BY next.app_id LIMIT 1)
    FROM tenants WHERE tenants.app_id IS NOT NULL
)
