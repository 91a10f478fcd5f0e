-- The sweeper's holds to look at (holds_unfinished_idx): released holds whose parked tasks are
-- not all sent again, and active automatic holds whose probe lease has lapsed (no probe ran for
-- two intervals) or was never taken.
SELECT id, released_at IS NOT NULL AS released FROM holds
WHERE (released_at IS NOT NULL AND NOT resent)
   OR (released_at IS NULL AND app_id IS NULL AND (probe_until IS NULL OR probe_until < now()))
ORDER BY id LIMIT :page
