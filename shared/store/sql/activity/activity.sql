-- GET /v1/activity: the application's activity rows (migrations/V40) starting in
-- [:from, :to), newest first, so that an answer cut at :rows_max keeps the latest buckets.
-- Bounded whatever the application did, and never another application's rows:
--   * buckets under an hour (:hourly false) walk its minutes: its part of activity_pkey
--     (app_id, minutes = 1, starts_at), folded minutes and the rows backends count into now;
--   * an hour or more (:hourly true) walk its hours (activity_pkey, minutes = 60), which the
--     fold keeps current to within two or three minutes, and the rows of those last minutes not
--     folded yet (activity_writers_app_idx).
-- At most :rows_max + 1 rows (the caller answers `complete: false` past :rows_max): the
-- window's minutes or hours times its models, not its tasks.
SELECT starts_at, model_id, created, succeeded, failed, canceled, failures, times,
    input_tokens, output_tokens, cost_usd
FROM (
    (SELECT * FROM activity
     WHERE app_id = :app_id AND minutes = CASE WHEN :hourly::boolean THEN 60 ELSE 1 END
       AND starts_at >= :from::timestamptz AND starts_at < :to::timestamptz
     ORDER BY app_id, minutes, starts_at DESC
     LIMIT :rows_max::bigint + 1)
    UNION ALL
    (SELECT * FROM activity
     WHERE :hourly::boolean AND app_id = :app_id AND writer <> 0
       AND starts_at >= :from::timestamptz AND starts_at < :to::timestamptz
     ORDER BY app_id, starts_at DESC
     LIMIT :rows_max::bigint + 1)
) rows
ORDER BY starts_at DESC
LIMIT :rows_max::bigint + 1
