-- Quota rows of days more than a week past go, a bounded page at a time.
DELETE FROM tenant_usage WHERE (app_id, day) IN (
    SELECT app_id, day FROM tenant_usage
    WHERE day < (now() AT TIME ZONE 'UTC')::date - 7
    ORDER BY day LIMIT :page
    FOR UPDATE SKIP LOCKED)
