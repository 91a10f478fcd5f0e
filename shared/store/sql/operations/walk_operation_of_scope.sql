-- walk_operation_of_tenant.sql over a scope's tasks (its application-owned tasks and its runs'):
-- in id order along tasks_scope_list_idx (migrations/V15), after the cursor and below the
-- operation's own id.
SELECT id, created_at,
    {{fragments/operation_match}}
FROM tasks
WHERE app_id = :app_id AND scope_id = :scope_id AND id > :cursor_id::uuid AND id < :operation_id::uuid
ORDER BY app_id, scope_id, id
LIMIT :page
