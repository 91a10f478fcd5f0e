-- Cancel a run (idempotent) and mark its tasks' cancel pending: cancel_run_tasks.sql reaches
-- them a page at a time. Creates lock the run FOR SHARE, so a racing create either commits
-- first (and a page of the cancel reaches its task) or sees the run canceled.
UPDATE runs SET state = 'canceled', cancel_requested_at = COALESCE(cancel_requested_at, now()),
    tasks_cancel_pending = true, updated_at = now()
WHERE id = :run_id AND app_id = :app_id
RETURNING id, app_id, scope_id, state, actor, cancel_requested_at, created_at, updated_at
