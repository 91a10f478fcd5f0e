INSERT INTO runs (id, app_id, scope_id, actor) VALUES (:id, :app_id, :scope_id, :actor)
RETURNING id, app_id, scope_id, state, actor, cancel_requested_at, created_at, updated_at
