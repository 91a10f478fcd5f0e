-- A tenant's hold of a profile or a scope (exactly one of :profile and :scope_id): placed, or the
-- tenant's active hold of the same target answered instead (`created` false). Refused (no row
-- placed, `created` NULL) when the tenant has :limit active holds already. Two places of the same
-- target at once: the unique indexes of active holds keep one, and the other finds nothing here
-- and asks again (src/holds.rs).
WITH existing AS (
    SELECT id, app_id, profile, scope_id, reason, created_at, released_at, released_by FROM holds
    WHERE released_at IS NULL AND app_id = :app_id
      AND profile IS NOT DISTINCT FROM :profile::text AND scope_id IS NOT DISTINCT FROM :scope_id::text
),
active AS (
    SELECT count(*) AS holds FROM holds WHERE released_at IS NULL AND app_id = :app_id
),
placed AS (
    INSERT INTO holds (id, app_id, profile, scope_id, reason)
    SELECT :hold_id, :app_id, :profile::text, :scope_id::text, :reason::text
    WHERE NOT EXISTS (SELECT 1 FROM existing) AND (SELECT holds FROM active) < :limit::bigint
    ON CONFLICT DO NOTHING
    RETURNING id, app_id, profile, scope_id, reason, created_at, released_at, released_by
)
SELECT hold.*, hold.id = :hold_id AS created
FROM (SELECT 1) one
LEFT JOIN (SELECT * FROM placed UNION ALL SELECT * FROM existing) hold ON true
