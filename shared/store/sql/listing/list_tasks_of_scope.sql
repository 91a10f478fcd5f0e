-- A page of a scope's tasks (its application-owned tasks and its runs' tasks) in id order, after
-- the previous page's last id, unfiltered: every row it reads it answers. A filter (status, kind,
-- model, time) is a walked listing (list_tasks_narrowed_of_scope.sql). Walks
-- tasks_scope_list_idx (migrations/V15).
SELECT {{fragments/task_columns}}
FROM tasks
WHERE app_id = :app_id AND scope_id = :scope_id AND id > :after
ORDER BY app_id, scope_id, id
LIMIT :limit
