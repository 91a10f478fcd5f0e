-- The sweeper's sample of the work in flight, for the backlog metrics: how many tasks are queued
-- (a deferred task awaiting a batch is not: it waits by design, DeferredWaiting counts it)
-- and running (each counted up to :cap, so a huge backlog costs a bounded look), how long the
-- oldest queued task has waited since its creation, the queue timeout's clock
-- (tasks_queued_deadline_idx: its first entry). Not counted: a deferred task (it waits for its
-- window by design), a parked one (`infinity`: held on purpose, ProfileHeldAlarm watches holds)
-- and one a hold's release sent again (`unheld_at`: its clock starts at the release, and the
-- queue timeout ends it from there). The look passes those older than the oldest counted one
-- row by row, as the queue timeout's walk passes the parked ones. A task given back or retried
-- counts from its creation: waiting that long is what the alarm is for,
-- and how long the oldest running task has been running since its first attempt started.
SELECT
    (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'queued' AND NOT awaiting_batch LIMIT :cap) capped) AS queued,
    (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'running' LIMIT :cap) capped) AS running,
    (SELECT (extract(epoch FROM now() - created_at) * 1000)::float8 FROM tasks
     WHERE status = 'queued' AND deferred_by IS NULL AND message_sent_at IS DISTINCT FROM 'infinity'
       AND unheld_at IS NULL
     ORDER BY deferred_by, created_at LIMIT 1) AS oldest_queued_ms,
    (SELECT (extract(epoch FROM now() - min(started_at)) * 1000)::float8 FROM tasks
     WHERE status = 'running') AS oldest_running_ms
