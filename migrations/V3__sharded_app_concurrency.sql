-- The application-wide count of active scoped tasks, sharded by scope.
--
-- One counter row per application made every admission of that application wait for the
-- previous one's commit (the row lock is held through it). Each scope now counts in one of
-- 32 shards of its application (`scope_shard`), so admissions and settlements of different
-- scopes rarely touch the same row. The cap is still exact: see `admission.rs` for the
-- argument (a shared application lock far from the cap, an exclusive one near it).

CREATE FUNCTION scope_shard(scope_id text) RETURNS smallint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (hashtext(scope_id) & 31)::smallint;

ALTER TABLE app_concurrency ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE app_concurrency DROP CONSTRAINT app_concurrency_pkey;
ALTER TABLE app_concurrency ADD PRIMARY KEY (app_id, shard);

-- Move existing counts to the shard of each active task's scope.
UPDATE app_concurrency SET active = 0;
INSERT INTO app_concurrency (app_id, shard, active)
SELECT app_id, scope_shard(scope_id), count(*)::int FROM tasks
WHERE status IN ('queued', 'running') AND cache_key IS NOT NULL
GROUP BY app_id, scope_shard(scope_id)
ON CONFLICT (app_id, shard) DO UPDATE SET active = EXCLUDED.active;
