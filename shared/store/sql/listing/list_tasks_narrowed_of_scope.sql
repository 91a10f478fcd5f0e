-- A page of a scope's tasks (its application-owned tasks and its runs' tasks) in id order (UUIDv7:
-- creation order), after the previous page's last id, filtered by status, kind, model or creation
-- time: list_tasks_of_scope.sql with the bounded walk of history/list_runs.sql.
-- The walk (`examined`) is at most :examine_max tasks after :after, along tasks_scope_list_idx
-- (migrations/V15); fragments/narrowed_page.sql filters it and says where the next page starts.
WITH examined AS (
    SELECT id FROM tasks WHERE app_id = :app_id AND scope_id = :scope_id AND id > :after
    ORDER BY app_id, scope_id, id
    LIMIT :examine_max
),
{{fragments/narrowed_page}}
