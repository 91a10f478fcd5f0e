-- aitasks: no transaction
-- The index that makes a run's Idempotency-Key name one run of its tenant (V29's column). Built
-- concurrently, outside a transaction, so that creating runs and tasks in runs goes on while it
-- builds on a large `runs` table (a build in the migration's transaction would hold V29's
-- lock, or a SHARE lock, on `runs` for the whole build: every create in a run would wait).
-- POST /v1/runs with a key answers through this index (runs/create_run.sql), so it is built
-- before the new code serves: the migrator runs first in a deploy (README, "Deploying").
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS runs_app_idempotency_key_idx ON runs (app_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
