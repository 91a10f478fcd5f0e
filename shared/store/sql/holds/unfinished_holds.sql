-- The sweeper's holds to look at: released holds whose parked tasks are not all sent again,
-- or released within the last hour (a park that read the hold active as it was released lists
-- its task after the release's re-send: holds/park.sql), and active automatic holds whose probe
-- lease has lapsed (no probe ran for two intervals) or was never taken. Each branch reads a
-- partial index of its own (migrations/V34).
SELECT id, released FROM (
    (SELECT id, true AS released FROM holds
     WHERE released_at IS NOT NULL AND NOT resent ORDER BY id LIMIT :page)
    UNION
    (SELECT id, true AS released FROM holds
     WHERE released_at IS NOT NULL AND released_at > now() - interval '1 hour'
     ORDER BY released_at DESC LIMIT :page)
    UNION
    (SELECT id, false AS released FROM holds
     WHERE released_at IS NULL AND app_id IS NULL AND (probe_until IS NULL OR probe_until < now())
     ORDER BY id LIMIT :page)
) unfinished
ORDER BY id LIMIT :page
