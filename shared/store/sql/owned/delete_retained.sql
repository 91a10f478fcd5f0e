-- Released application tasks whose release and completion are both older than :retention_ms.
DELETE FROM tasks WHERE id IN (
    SELECT id FROM tasks
    WHERE run_id IS NULL AND released_at IS NOT NULL AND completed_at IS NOT NULL
      AND GREATEST(released_at, completed_at) < now() - :retention_ms::bigint * interval '1 millisecond'
    ORDER BY GREATEST(released_at, completed_at), id LIMIT :page
    FOR UPDATE SKIP LOCKED)
