-- A tenant's holds and the automatic ones, in creation order (ids are UUIDv7), after :after,
-- :state `active`, `released` or NULL (both); :limit rows (the caller asks one more than a page
-- to know whether another follows). Both branches walk an index of their own (holds_app_idx,
-- holds_automatic_idx).
SELECT id, app_id, profile, scope_id, reason, created_at, released_at, released_by FROM (
    (SELECT * FROM holds WHERE app_id = :app_id AND id > :after ORDER BY id LIMIT :limit)
    UNION ALL
    (SELECT * FROM holds WHERE app_id IS NULL AND id > :after ORDER BY id LIMIT :limit)
) hold
WHERE :state::text IS NULL OR (:state::text = 'active') = (released_at IS NULL)
ORDER BY id LIMIT :limit
