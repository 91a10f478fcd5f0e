-- The data of the status-listing measurement (issue 48, BENCHMARKS.md "A listing by status"):
-- :rows tasks (3,000,000 by default) over the last 30 days, in id order (ids are UUIDv7 of the
-- creation time, as the store writes them), every sixth one of them (500,000 of 3,000,000) a
-- task of tenant `app-big` in scope `big` and run 00000000-0000-7000-8000-00000000b1b1, all
-- succeeded; the others spread over 100 tenants and 10,000 scopes, 70% of them in runs of 20
-- tasks, ended 95% succeeded, 3% failed, 2% canceled. Payloads are thin (as harness/bench/sql/
-- growth_load.sql's: the listing's reads depend on the indexes and the row count, not on them).
-- Run on a migrated, empty database:
--   psql "$URL" -v rows=3000000 -f harness/bench/sql/listing_load.sql
\set ON_ERROR_STOP on
SET growth.rows = :rows;

-- One transaction: every statement sees the same now(), from which the runs' ids are made.
BEGIN;

CREATE FUNCTION pg_temp.uuid7(at timestamptz, salt bigint) RETURNS uuid
    LANGUAGE sql IMMUTABLE
    RETURN (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7'
        || substr(md5(salt::text), 1, 3) || '8' || substr(md5(salt::text), 4, 15))::uuid;

INSERT INTO runs (id, app_id, scope_id, created_at, updated_at)
VALUES ('00000000-0000-7000-8000-00000000b1b1', 'app-big', 'big', now() - interval '31 days', now());

INSERT INTO runs (id, app_id, scope_id, created_at, updated_at)
SELECT pg_temp.uuid7(now() - interval '31 days', -r), 'app-' || lpad((r % 100)::text, 2, '0'),
       'scope-' || (r % 10000), now() - interval '31 days', now()
FROM generate_series(0, current_setting('growth.rows')::bigint / 20) AS r;

INSERT INTO tasks (id, app_id, run_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id,
                   max_attempts, status, output, attempts, error_code, error_message, created_at, started_at,
                   completed_at, updated_at)
SELECT pg_temp.uuid7(created, i), app,
       CASE WHEN big THEN '00000000-0000-7000-8000-00000000b1b1'::uuid
            WHEN i % 10 < 7 THEN pg_temp.uuid7(now() - interval '31 days', -(i / 20)) END,
       scope, 'step', 'k' || i, 'classify', '{"prompt": "p", "input": "x"}', repeat('0', 64), 'default', 3, st,
       CASE WHEN st = 'succeeded' THEN '"pos"'::jsonb END, 1,
       CASE st WHEN 'failed' THEN 'WORKFLOW_AI_PROVIDER_ERROR' WHEN 'canceled' THEN 'WORKFLOW_AI_CANCELED' END,
       CASE WHEN st <> 'succeeded' THEN 'ended' END, created, created, created, created
FROM (
    SELECT i, i % 6 = 0 AS big,
           now() - make_interval(secs => (n - i) * 2592000.0 / n + 1) AS created,
           CASE WHEN i % 6 = 0 THEN 'app-big' ELSE 'app-' || lpad(((i / 20) % 100)::text, 2, '0') END AS app,
           CASE WHEN i % 6 = 0 THEN 'big' ELSE 'scope-' || ((i / 20) % 10000) END AS scope,
           CASE WHEN i % 6 = 0 OR i % 100 < 95 THEN 'succeeded' WHEN i % 100 < 98 THEN 'failed'
                ELSE 'canceled' END AS st
    FROM generate_series(1, current_setting('growth.rows')::bigint) AS i,
         LATERAL (SELECT current_setting('growth.rows')::bigint AS n) AS total
) AS shape;

COMMIT;

VACUUM ANALYZE tasks;
VACUUM ANALYZE runs;
