-- The sweeper's `foldActivity` duty, its end: hour rows of activity (migrations/V40) older than
-- :kept_days deleted, at most :limit a call, the oldest first (activity_hours_idx).
DELETE FROM activity a
USING (
    SELECT app_id, starts_at, minutes, writer, model_id FROM activity
    WHERE minutes = 60 AND starts_at < now() - :kept_days::bigint * interval '1 day'
    ORDER BY starts_at
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
) old
WHERE (a.app_id, a.starts_at, a.minutes, a.writer, a.model_id)
    = (old.app_id, old.starts_at, old.minutes, old.writer, old.model_id)
