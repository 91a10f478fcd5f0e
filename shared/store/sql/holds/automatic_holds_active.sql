-- Profiles held automatically now (the sweeper's `ProfilesHeld` gauge, which ProfileHeldAlarm
-- watches: in alarm while one is held, OK once every probe has been answered). At most one
-- active automatic hold per profile (migrations/V34's unique index), so this counts a handful
-- of rows along the active holds' partial index.
SELECT count(*)::bigint AS held FROM holds WHERE released_at IS NULL AND app_id IS NULL
