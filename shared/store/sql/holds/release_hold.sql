-- Release an active hold: a tenant's by a person (:app_id, its tenant), or an automatic one by
-- the probe the provider answered (:app_id NULL). The caller then sends its parked tasks again
-- (resend_held.sql); a park that read the hold active just before this commit is listed late and
-- sent by the sweeper (unfinished_holds.sql). No row: not active, or not this caller's.
UPDATE holds
SET released_at = now(), released_by = :released_by, probe_task = NULL, probe_until = NULL
WHERE id = :hold_id AND released_at IS NULL AND app_id IS NOT DISTINCT FROM :app_id::text
RETURNING id, app_id, profile, scope_id, reason, created_at, released_at, released_by
