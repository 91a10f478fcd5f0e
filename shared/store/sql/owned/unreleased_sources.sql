-- One page of the (scope, source) pairs with unreleased application tasks, after the cursor.
-- The cursor is an index condition on tasks_unreleased_idx (migrations/V7).
SELECT DISTINCT scope_id, source_id FROM tasks
WHERE app_id = :app_id AND run_id IS NULL AND released_at IS NULL AND source_id IS NOT NULL
  AND (scope_id, source_id) > (:after_scope, :after_source)
ORDER BY scope_id, source_id LIMIT :page
