-- unreleased_sources.sql for one step key (tasks_unreleased_step_idx).
SELECT DISTINCT scope_id, source_id FROM tasks
WHERE app_id = :app_id AND run_id IS NULL AND released_at IS NULL AND source_id IS NOT NULL
  AND step_key = :step_key AND (scope_id, source_id) > (:after_scope, :after_source)
ORDER BY scope_id, source_id LIMIT :page
