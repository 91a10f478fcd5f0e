-- The next chunk of a segment a call streams (open_segment.sql opened it), while the task runs
-- this attempt. A segment's last flush may carry no text: it marks the chunk it ends on `final`.
WITH live AS (
    SELECT id, set_config('synchronous_commit', 'off', true) FROM tasks
    WHERE id = :task_id AND status = 'running' AND attempts = :attempt
)
INSERT INTO task_output_chunks (task_id, segment, start_at, end_at, text, final)
SELECT :task_id, :segment::int, :start_at::int, :start_at + char_length(:text::text), :text, :final FROM live
ON CONFLICT (task_id, segment, end_at) DO UPDATE SET final = task_output_chunks.final OR excluded.final
