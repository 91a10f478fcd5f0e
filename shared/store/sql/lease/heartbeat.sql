-- A worker's heartbeat, with the cancel check. A lost heartbeat is only an older heartbeat_at
-- (the sweeper waits three intervals), so it commits without waiting for the WAL flush.
UPDATE tasks SET heartbeat_at = now()
WHERE id = :task_id AND status = 'running' AND attempts = :attempt
RETURNING cancel_requested_at IS NOT NULL AS cancel_requested,
    set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
