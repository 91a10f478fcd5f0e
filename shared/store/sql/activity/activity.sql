-- GET /v1/activity: the application's activity rows (migrations/V40) starting in
-- [:from, :to), oldest first. Bounded whatever the application did: a walk of its own part of
-- activity_pkey (app_id, starts_at, ...), never another application's rows, at most
-- :rows_max + 1 rows (the caller answers `complete: false` past :rows_max). The rows are a
-- minute (per writer for the last minutes, then one), or an hour once folded: their number is
-- the window's minutes and hours, not its tasks.
SELECT starts_at, model_id, created, succeeded, failed, canceled, failures, wait_ms, run_ms,
    input_tokens, output_tokens, cost_usd
FROM activity
WHERE app_id = :app_id AND starts_at >= :from::timestamptz AND starts_at < :to::timestamptz
ORDER BY app_id, starts_at
LIMIT :rows_max::bigint + 1
