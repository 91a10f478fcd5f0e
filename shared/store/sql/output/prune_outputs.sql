-- The sweeper's `outputs` duty: the live output of tasks that ended over :keep_ms ago, or are
-- gone (deleted with their scope), at most :limit tasks' a sweep, skipping what another sweeper
-- holds. Walks `task_streams` (the tasks streaming now and those ended lately), never the text.
WITH doomed AS (
    SELECT s.task_id FROM task_streams s LEFT JOIN tasks t ON t.id = s.task_id
    WHERE s.opened_at < now() - :keep_ms * interval '1 millisecond'
        AND (t.id IS NULL OR t.completed_at < now() - :keep_ms * interval '1 millisecond')
    ORDER BY s.opened_at
    LIMIT :limit
    FOR UPDATE OF s SKIP LOCKED
),
chunks AS (
    DELETE FROM task_output_chunks c USING doomed WHERE c.task_id = doomed.task_id
)
DELETE FROM task_streams s USING doomed WHERE s.task_id = doomed.task_id
RETURNING s.task_id
