-- The sweeper's `foldActivity` duty, its end: folded minute rows of activity (migrations/V40)
-- older than :minutes_kept_hours (their hours hold them) and hour rows older than :kept_days
-- deleted, at most :limit of each a call, the oldest first, each kind by its own partial index
-- (activity_minutes_idx, activity_hours_idx), skipping rows another sweeper holds.
WITH old_minutes AS (
    SELECT app_id, minutes, starts_at, writer, model_id FROM activity
    WHERE writer = 0 AND minutes = 1
      AND starts_at < now() - :minutes_kept_hours::bigint * interval '1 hour'
    ORDER BY starts_at
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
),
old_hours AS (
    SELECT app_id, minutes, starts_at, writer, model_id FROM activity
    WHERE minutes = 60 AND starts_at < now() - :kept_days::bigint * interval '1 day'
    ORDER BY starts_at
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
)
DELETE FROM activity a
USING (SELECT * FROM old_minutes UNION ALL SELECT * FROM old_hours) old
WHERE (a.app_id, a.minutes, a.starts_at, a.writer, a.model_id)
    = (old.app_id, old.minutes, old.starts_at, old.writer, old.model_id)
