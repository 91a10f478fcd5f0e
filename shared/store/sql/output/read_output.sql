-- A reader's look at a task's live output (docs/api.md, "Live output"): the tenant's task (no
-- row when it has none), its current segment and the attempt writing it, the segment's last
-- chunk (its length, and whether it is final), and at most :limit chunks after the reader's
-- offset, along the chunks' primary key. :after counts on the reader's :segment; on another
-- segment (or none given, then it is the current one's) the walk starts at 0.
WITH task AS (
    SELECT id, status FROM tasks WHERE id = :task_id AND app_id = :app_id
),
stream AS (
    SELECT s.segment, s.attempt,
        CASE WHEN :segment::int IS NULL OR s.segment = :segment THEN :after::int ELSE 0 END AS after
    FROM task_streams s JOIN task ON s.task_id = task.id
),
last AS (
    SELECT c.end_at AS length, c.final FROM task_output_chunks c, stream
    WHERE c.task_id = :task_id AND c.segment = stream.segment
    ORDER BY c.end_at DESC LIMIT 1
)
SELECT task.status, stream.segment, stream.attempt, stream.after, last.length, last.final AS ended,
    chunk.start_at, chunk.end_at, chunk.text
FROM task
LEFT JOIN stream ON true
LEFT JOIN last ON true
LEFT JOIN LATERAL (
    SELECT c.start_at, c.end_at, c.text FROM task_output_chunks c
    WHERE c.task_id = task.id AND c.segment = stream.segment AND c.end_at > stream.after
    ORDER BY c.end_at LIMIT :limit
) chunk ON true
ORDER BY chunk.end_at
