-- A call's stream opens a segment of its task's live output (docs/api.md, "Live output") with
-- its first chunk: the next segment number, the task's older segments deleted (a reader never
-- sees two calls' text mixed), the chunk written. Only while the task runs this attempt (the
-- lease as lease/check.sql reads it); otherwise nothing, and no row comes back.
-- `synchronous_commit` off: live output lost in a crash costs a reader some text, never the
-- task (its output is the record), and a flush need not wait for the WAL's.
WITH live AS (
    SELECT id, set_config('synchronous_commit', 'off', true) FROM tasks
    WHERE id = :task_id AND status = 'running' AND attempts = :attempt
),
stream AS (
    INSERT INTO task_streams AS s (task_id, segment, attempt)
    SELECT id, 1, :attempt FROM live
    ON CONFLICT (task_id) DO UPDATE
        SET segment = s.segment + 1, attempt = excluded.attempt, opened_at = now()
        -- `live` read the task before this waited on the stream's row: a later attempt that
        -- opened its segment meanwhile keeps the stream (the lost worker writes nothing).
        WHERE s.attempt <= excluded.attempt
    RETURNING segment
),
older AS (
    DELETE FROM task_output_chunks c USING stream
    WHERE c.task_id = :task_id AND c.segment < stream.segment
)
INSERT INTO task_output_chunks (task_id, segment, start_at, end_at, text, final)
SELECT :task_id, stream.segment, 0, char_length(:text::text), :text, :final FROM stream
RETURNING segment
