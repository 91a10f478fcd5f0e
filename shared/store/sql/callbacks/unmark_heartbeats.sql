-- Heartbeats that did not go through (AWS throttled them, or the call failed with tries left in the sweep): each callback gets back the heartbeat it had before take_heartbeats
-- marked it (item i of every array being callback i), so it is due again at once and keeps its
-- place, oldest first. Only a callback still waiting and still as that take marked it changes:
-- one a concurrent sweep has heartbeated since is left alone.
UPDATE task_callbacks
SET heartbeat_at = given.last_heartbeat_at
FROM unnest(:ids::bigint[], :marked_ats::timestamptz[], :last_heartbeat_ats::timestamptz[])
    AS given(id, marked_at, last_heartbeat_at)
WHERE task_callbacks.id = given.id AND task_callbacks.state = 'waiting'
  AND task_callbacks.heartbeat_at = given.marked_at
RETURNING task_callbacks.id
