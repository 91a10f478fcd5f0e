-- A page of a run's tasks in id order (UUIDv7: creation order), after the previous page's last
-- id, optionally of one status. Walks tasks_run_list_idx (migrations/V15); a status filter reads
-- past the tasks it skips, at most one run's worth.
SELECT {{fragments/task_columns}}
FROM tasks
WHERE run_id = :run_id AND app_id = :app_id AND id > :after
  AND (:status::text IS NULL OR status = :status::text)
ORDER BY id
LIMIT :limit
