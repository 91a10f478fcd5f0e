-- A run's cancel reaches its tasks in bounded batches: the request that cancels the run does
-- what fits in its time, and the sweeper finishes runs still marked here. The partial index
-- holds only runs whose cancel is unfinished, so the sweeper's look is tiny however many runs
-- there are.
ALTER TABLE runs ADD COLUMN tasks_cancel_pending boolean NOT NULL DEFAULT false;
CREATE INDEX runs_cancel_pending_idx ON runs (updated_at, id) WHERE tasks_cancel_pending;
