-- A page of a scope's tasks (its application-owned tasks and its runs' tasks) in id order, after
-- the previous page's last id, optionally of one status. Walks tasks_scope_list_idx
-- (migrations/V15).
SELECT {{fragments/task_columns}}
FROM tasks
WHERE app_id = :app_id AND scope_id = :scope_id AND id > :after
  AND (:status::text IS NULL OR status = :status::text)
ORDER BY id
LIMIT :limit
