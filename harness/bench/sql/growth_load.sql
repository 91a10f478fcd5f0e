-- The growth study's data (make growth): :rows tasks as a mature deployment holds them, written
-- with generate_series straight into the migrated schema, not through the API.
--
-- The shape, per task number i (1 = oldest, :rows = newest):
--   * created over the last 90 days in id order; ids are UUIDv7 of the creation time, as the
--     store writes them;
--   * 70% belong to runs (20 task numbers per run, 100 apps, 10,000 scopes); 30% belong to
--     their application (same apps and scopes, about 300 sources a scope) and are scoped
--     (source, cache key, admission history);
--   * the newest 2,000 are in flight (1,000 queued, 500 running, the rest settled); the others
--     ended 95% succeeded, 3% failed, 2% canceled;
--   * application tasks of the last two days are 80% released (retention deletes them 24 h
--     after release and completion, so older released rows do not exist); older ones are kept
--     unreleased, as an application that keeps its results holds them;
--   * completion events and admission history exist for the last 26 hours only, as the sweeper
--     prunes both after 24 hours.
--
-- Payloads are thin (a 30-byte request, a 20-byte output, no usage, no attempt log, no model
-- configuration hash on run tasks) and the history is written at fillfactor 100 (the table's 85 is restored for
-- new rows), so that 100 million rows fit the disk of the machine this ran on: about 390 bytes
-- a task instead of the 780 that realistic payloads took at 1 million rows. Indexes do not
-- depend on payload size. Nor does the planner's choice get easier: a thinner heap makes a full
-- scan cheaper, so an index plan chosen here is also chosen with realistic rows.
--
-- Everything happens in one transaction that first truncates the tables: with wal_level =
-- minimal (scripts/growth.sh sets it) Postgres then writes no WAL for the load. Indexes and
-- constraints are dropped first and rebuilt from their own definitions at the end, so the
-- schema is exactly the migrated one.
\set ON_ERROR_STOP on
SET growth.rows = :rows;
SET maintenance_work_mem = '4GB';
SET max_parallel_maintenance_workers = 2;

BEGIN;

-- A UUIDv7 for a moment: 48 bits of milliseconds, the version nibble, 74 bits from `salt`.
CREATE FUNCTION pg_temp.uuid7(at timestamptz, salt bigint) RETURNS uuid
    LANGUAGE sql IMMUTABLE
    RETURN (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7'
        || substr(md5(salt::text), 1, 3) || '8' || substr(md5(salt::text), 4, 15))::uuid;

-- Task number i of n as a tasks row (columns in the table's order).
CREATE FUNCTION pg_temp.growth_tasks(lo bigint, hi bigint, n bigint) RETURNS SETOF tasks
    LANGUAGE sql STABLE AS $$
    WITH base AS (
        SELECT i,
               now() - make_interval(secs => (n - i) * 7776000.0 / n + 1) AS created,
               (n - i) * 7776000.0 / n AS age,
               i % 10 >= 7 AS owned,
               i / 20 AS run_no,
               now() - make_interval(secs => (n - i / 20 * 20) * 7776000.0 / n + 1) AS run_created,
               'app-' || lpad(((i / 20) % 100)::text, 2, '0') AS app,
               'scope-' || ((i / 20) % 10000) AS scope,
               CASE WHEN i > n - 2000 AND i % 2 = 0 THEN 'queued'
                    WHEN i > n - 2000 AND i % 4 = 1 THEN 'running'
                    WHEN i % 100 < 95 THEN 'succeeded'
                    WHEN i % 100 < 98 THEN 'failed'
                    ELSE 'canceled' END AS st,
               (ARRAY['generate_text', 'classify', 'classify_many', 'extract_data'])[i % 4 + 1] AS kind
        FROM generate_series(lo, hi) AS i
    )
    SELECT pg_temp.uuid7(created, i),                                          -- id
           app,                                                               -- app_id
           CASE WHEN NOT owned THEN pg_temp.uuid7(run_created, -run_no) END,  -- run_id
           scope,                                                             -- scope_id
           CASE WHEN owned THEN jsonb_build_object('userId', 'user-' || (i % 50000)) END,
           CASE WHEN NOT owned THEN 'user-' || (i % 50000) END,               -- usage_user_id
           CASE WHEN owned THEN 'doc-' || ((i / 7) % 300) END,                -- source_id
           CASE WHEN owned THEN md5('cache' || i) || md5('key' || i) END,     -- cache_key
           'step-' || (i % 20),                                               -- step_key
           CASE WHEN owned THEN 'eff-' || i ELSE 'run-' || run_no || ':step-' || (i % 20) END,
           kind,
           jsonb_build_object('input', 'Message ' || i),                      -- request (thin)
           md5('input' || i) || md5('hash' || i),                             -- input_hash
           'gpt-4o-mini',                                                     -- model_id
           NULL::jsonb,                                                       -- model_ref
           CASE WHEN owned THEN md5('config') || md5('hash') END,             -- model_config_hash
           st,                                                                -- status
           CASE WHEN st = 'succeeded' THEN '{"label": "shipping"}'::jsonb END, -- output (thin)
           NULL::jsonb,                                                       -- usage (thin)
           CASE WHEN st = 'queued' THEN 0 ELSE 1 END,                        -- attempts
           3,                                                                 -- max_attempts
           CASE st WHEN 'failed' THEN 'WORKFLOW_AI_PROVIDER_ERROR' WHEN 'canceled' THEN 'WORKFLOW_AI_CANCELED' END,
           CASE st WHEN 'failed' THEN 'The provider answered 500.' WHEN 'canceled' THEN 'The task was canceled.' END,
           CASE WHEN st = 'canceled' THEN created + interval '1 second' END,  -- cancel_requested_at
           CASE WHEN st = 'running' THEN now() - interval '2 seconds'
                WHEN st <> 'queued' THEN created + interval '100 milliseconds' END, -- heartbeat_at
           created,                                                           -- message_sent_at
           CASE WHEN owned AND st IN ('succeeded', 'failed', 'canceled') AND age < 172800 - 3600
                     AND i % 5 <> 0 THEN created + interval '1 hour' END,     -- released_at
           created,                                                           -- created_at
           CASE WHEN st <> 'queued' THEN created + interval '50 milliseconds' END, -- started_at
           CASE WHEN st IN ('succeeded', 'failed', 'canceled') THEN created + interval '2 seconds' END,
           CASE WHEN st IN ('succeeded', 'failed', 'canceled') THEN created + interval '2 seconds'
                ELSE created END,                                             -- updated_at
           NULL::text,                                                        -- trace_header
           NULL::uuid,                                                        -- claim_token
           NULL::timestamptz,                                                 -- deferred_by
           false,                                                             -- awaiting_batch
           NULL::uuid,                                                        -- batch_id
           true,                                                              -- has_poller
           CASE WHEN st <> 'queued' THEN created + interval '50 milliseconds' END, -- attempt_started_at
           NULL::jsonb,                                                       -- attempt_log (thin)
           NULL::jsonb,                                                       -- scope_terms
           NULL::uuid,                                                        -- replay_of
           NULL::uuid,                                                        -- replay_operation
           NULL::timestamptz,                                                 -- unheld_at
           NULL::bigint,                                                      -- ended_event_id
           NULL::timestamptz                                                  -- batch_lease_until
    FROM base
$$;

-- Keep every index and key of the four big tables, and the foreign keys of other tables that
-- point at them (task_callbacks, task_repairs, ...), then drop them for the load.
CREATE TEMP TABLE growth_rebuild ON COMMIT DROP AS
    SELECT 1 AS pass, format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname,
                             pg_get_constraintdef(oid)) AS ddl,
           format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname) AS drop_ddl,
           contype = 'f' AS is_foreign
    FROM pg_constraint
    WHERE (conrelid IN ('tasks'::regclass, 'runs'::regclass, 'task_events'::regclass,
                        'scope_admissions'::regclass) AND contype IN ('p', 'u', 'f'))
       OR (confrelid IN ('tasks'::regclass, 'runs'::regclass, 'task_events'::regclass,
                         'scope_admissions'::regclass) AND contype = 'f')
    UNION ALL
    SELECT 2, pg_get_indexdef(i.indexrelid), format('DROP INDEX %s', i.indexrelid::regclass), false
    FROM pg_index i
    WHERE i.indrelid IN ('tasks'::regclass, 'runs'::regclass, 'task_events'::regclass,
                         'scope_admissions'::regclass)
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
-- The rows that point at tasks go (their keys are re-added over the new tasks).
SELECT DISTINCT format('TRUNCATE %s', conrelid::regclass) FROM pg_constraint
WHERE contype = 'f' AND confrelid = 'tasks'::regclass AND conrelid <> 'tasks'::regclass \gexec
SELECT drop_ddl FROM growth_rebuild ORDER BY is_foreign DESC, pass DESC \gexec
TRUNCATE tasks, runs, task_events, scope_admissions, scope_budgets, app_concurrency;
ALTER TABLE tasks SET (fillfactor = 100);

-- Loaded rows are history, not endings: the trigger that writes what follows a task's end
-- (migrations/V38) would write an event for each, and the activity count (V40) would count them
-- all created now (the probe writes the activity of a busy day itself).
ALTER TABLE tasks DISABLE TRIGGER tasks_inserted_ended, DISABLE TRIGGER tasks_inserted_ended_event,
    DISABLE TRIGGER tasks_activity_inserted;

DO $$
DECLARE
    n bigint := current_setting('growth.rows')::bigint;
    chunk bigint := 2000000;
    lo bigint := 1;
    started timestamptz := clock_timestamp();
BEGIN
    WHILE lo <= n LOOP
        INSERT INTO tasks SELECT * FROM pg_temp.growth_tasks(lo, LEAST(lo + chunk - 1, n), n);
        RAISE NOTICE 'growth: % of % tasks (% s)', LEAST(lo + chunk - 1, n), n,
            round(extract(epoch FROM clock_timestamp() - started));
        lo := lo + chunk;
    END LOOP;
END
$$;
ALTER TABLE tasks ENABLE TRIGGER tasks_inserted_ended, ENABLE TRIGGER tasks_inserted_ended_event,
    ENABLE TRIGGER tasks_activity_inserted;

-- One run per 20 task numbers, with the id its tasks refer to; 1% canceled.
INSERT INTO runs (id, app_id, scope_id, state, actor, cancel_requested_at, created_at, updated_at)
SELECT pg_temp.uuid7(created, -r),
       'app-' || lpad((r % 100)::text, 2, '0'), 'scope-' || (r % 10000),
       CASE WHEN r % 100 = 99 THEN 'canceled' ELSE 'running' END,
       jsonb_build_object('userId', 'user-' || (r % 50000)),
       CASE WHEN r % 100 = 99 THEN created END, created, created
FROM (SELECT r, now() - make_interval(secs => (n - r * 20) * 7776000.0 / n + 1) AS created, n
      FROM (SELECT current_setting('growth.rows')::bigint AS n) s,
           generate_series(0, current_setting('growth.rows')::bigint / 20) AS r) runs_base;

-- The last 26 hours: completion events (delivered but the newest 100) and admission history.
INSERT INTO task_events (task_id, app_id, payload, created_at, available_at, delivered_at)
SELECT id, app_id,
       jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id, 'runId', run_id,
                          'stepKey', step_key, 'effectKey', effect_key, 'status', status,
                          'errorCode', error_code, 'completedAt', completed_at),
       completed_at, completed_at + interval '30 seconds',
       CASE WHEN row_number() OVER (ORDER BY completed_at DESC) > 100
            THEN completed_at + interval '50 milliseconds' END
FROM pg_temp.growth_tasks(
         current_setting('growth.rows')::bigint - current_setting('growth.rows')::bigint * 26 / 2160,
         current_setting('growth.rows')::bigint, current_setting('growth.rows')::bigint)
WHERE completed_at IS NOT NULL
ORDER BY completed_at;

INSERT INTO scope_admissions (task_id, app_id, scope_id, source_id, logical_key, created_at)
SELECT id, app_id, scope_id, source_id,
       CASE WHEN status IN ('failed', 'canceled') THEN NULL ELSE cache_key END, created_at
FROM pg_temp.growth_tasks(
         current_setting('growth.rows')::bigint - current_setting('growth.rows')::bigint * 26 / 2160,
         current_setting('growth.rows')::bigint, current_setting('growth.rows')::bigint)
WHERE run_id IS NULL;

INSERT INTO scope_budgets (app_id, scope_id, tokens, refilled_at)
SELECT 'app-' || lpad((s % 100)::text, 2, '0'), 'scope-' || s, 5, now() FROM generate_series(0, 9999) AS s;

ALTER TABLE tasks SET (fillfactor = 85);

\echo growth: rebuilding keys and indexes
SELECT ddl FROM growth_rebuild ORDER BY is_foreign, pass \gexec

INSERT INTO app_concurrency (app_id, shard, active)
SELECT app_id, scope_shard(scope_id), count(*)::int FROM tasks
WHERE status IN ('queued', 'running') AND cache_key IS NOT NULL
GROUP BY app_id, scope_shard(scope_id);

COMMIT;

\echo growth: analyzing
VACUUM (ANALYZE) tasks, runs, task_events, scope_admissions, scope_budgets, app_concurrency;
