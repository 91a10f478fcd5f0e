-- Delete up to :page of a scope's application-owned tasks (or one source's, when :source_id is
-- set). An active scoped one among them lowers the application's active count, by the trigger on
-- `tasks` (migrations/V38). The admission history stays. Returns how many were deleted. The rows
-- are locked in id order, as every statement that locks several tasks locks them (no deadlock
-- with a group commit).
WITH deleted AS (
    DELETE FROM tasks WHERE id IN (
        SELECT id FROM tasks
        WHERE app_id = :app_id AND scope_id = :scope_id AND run_id IS NULL
          AND (:source_id::text IS NULL OR source_id = :source_id)
        ORDER BY id LIMIT :page
        FOR UPDATE)
    RETURNING 1
)
SELECT count(*) FROM deleted
