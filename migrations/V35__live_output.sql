-- Live output (docs/api.md, "Live output"): the text of a running task's answer as the model
-- writes it, kept beside the task and never on its row (a flush writes no WAL on `tasks`).
--
-- `task_streams`: one row per task that has streamed: its current segment (1, 2, … one per call
-- that streamed) and the attempt writing it. Written when a segment opens, never per flush; the
-- sweeper finds the streams of ended tasks here (its rows are as many as the tasks streaming
-- now and those ended lately, so its scan is bounded by them, not by the text).
-- No foreign key to `tasks`: its check would lock the task's row at each segment; the sweeper
-- deletes the streams of tasks that are gone.
CREATE TABLE IF NOT EXISTS task_streams (
    task_id   uuid PRIMARY KEY,
    segment   integer NOT NULL CHECK (segment > 0),
    attempt   integer NOT NULL,
    opened_at timestamptz NOT NULL DEFAULT now()
);

-- The text, in the chunks the worker flushed (coalesced: at most every AITASK_STREAM_FLUSH_MS
-- or AITASK_STREAM_FLUSH_BYTES). Insert-only: each character is written once, so WAL grows
-- with the text, not with its square as appending to one value would. `start_at`/`end_at`:
-- characters (code points) of the segment before and through this chunk; the primary key is
-- the read's walk (a task's segment from an offset). A segment's last chunk says `final`.
CREATE TABLE IF NOT EXISTS task_output_chunks (
    task_id  uuid NOT NULL,
    segment  integer NOT NULL,
    start_at integer NOT NULL CHECK (start_at >= 0),
    end_at   integer NOT NULL,
    text     text NOT NULL,
    final    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (task_id, segment, end_at),
    CONSTRAINT task_output_chunks_span_check CHECK (end_at = start_at + char_length(text))
);
