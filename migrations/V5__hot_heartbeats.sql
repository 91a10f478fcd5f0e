-- Heartbeats as HOT updates.
--
-- A heartbeat writes only `heartbeat_at`. While that column was an index key, every heartbeat
-- wrote a new entry into every index of the table. The running set is small (bounded by the
-- number of tasks in flight), so the sweeper finds stale ones by scanning it instead: the
-- running index is keyed by id only, and a heartbeat changes no indexed column. The free
-- space left in each page lets the new row version stay on the same page (a HOT update).
--
-- Nothing reads the completion events by task, so their task index goes too.

DROP INDEX tasks_running_idx;
CREATE INDEX tasks_running_idx ON tasks (id) WHERE status = 'running';
ALTER TABLE tasks SET (fillfactor = 85);
DROP INDEX task_events_task_idx;
