-- One hold the tenant may see: its own, or an automatic one.
SELECT id, app_id, profile, scope_id, reason, created_at, released_at, released_by FROM holds
WHERE id = :hold_id AND (app_id = :app_id OR app_id IS NULL)
