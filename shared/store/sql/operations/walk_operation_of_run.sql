-- walk_operation_of_tenant.sql over a run's tasks: in id order (UUIDv7, creation order) along
-- tasks_run_list_idx (migrations/V15), after the cursor and below the operation's own id. The run
-- is checked to be the operation's tenant's (runs_pkey), as list_tasks_of_run.sql does: a filter
-- may name any run id, and another tenant's run is then walked not at all (a condition on the
-- task's app_id would read that whole run, row by row, to find nothing).
SELECT id, created_at,
    {{fragments/operation_match}}
FROM tasks
WHERE run_id = (SELECT id FROM runs WHERE id = :run_id AND app_id = :app_id)
  AND id > :cursor_id::uuid AND id < :operation_id::uuid
ORDER BY run_id, id
LIMIT :page
