-- The sweeper's sample of the work in flight, for the backlog metrics: how many tasks are queued
-- (a deferred task awaiting a batch is not: it waits by design, DeferredWaiting counts it)
-- and running (each counted up to :cap, so a huge backlog costs a bounded look), how long the
-- oldest queued task has waited since it was (re)queued (tasks_queued_at_idx: one index entry),
-- and how long the oldest running task has been running since its first attempt started.
SELECT
    (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'queued' AND NOT awaiting_batch LIMIT :cap) capped) AS queued,
    (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'running' LIMIT :cap) capped) AS running,
    (SELECT (extract(epoch FROM now() - min(updated_at)) * 1000)::float8 FROM tasks
     WHERE status = 'queued' AND NOT awaiting_batch) AS oldest_queued_ms,
    (SELECT (extract(epoch FROM now() - min(started_at)) * 1000)::float8 FROM tasks
     WHERE status = 'running') AS oldest_running_ms
