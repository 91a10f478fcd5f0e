SELECT id, app_id, scope_id, state, actor, cancel_requested_at, created_at, updated_at FROM runs
WHERE id = :run_id AND app_id = :app_id
