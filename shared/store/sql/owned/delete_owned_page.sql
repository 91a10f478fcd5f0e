-- Delete up to :page of a scope's application-owned tasks (or one source's, when :source_id is
-- set), lowering the application's active count for the active scoped ones among them. The
-- admission history stays. Returns how many were deleted. The rows are locked in id order, as
-- every statement that locks several tasks locks them (no deadlock with a group commit).
WITH deleted AS (
    DELETE FROM tasks WHERE id IN (
        SELECT id FROM tasks
        WHERE app_id = :app_id AND scope_id = :scope_id AND run_id IS NULL
          AND (:source_id::text IS NULL OR source_id = :source_id)
        ORDER BY id LIMIT :page
        FOR UPDATE)
    RETURNING status, cache_key
),
ended AS (
    UPDATE app_concurrency
    SET active = GREATEST(active - (SELECT count(*) FROM deleted
                                    WHERE status IN ('queued', 'running') AND cache_key IS NOT NULL)::int, 0)
    WHERE app_id = :app_id AND shard = scope_shard(:scope_id)
)
SELECT count(*) FROM deleted
