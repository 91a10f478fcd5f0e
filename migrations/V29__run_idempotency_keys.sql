-- POST /v1/runs with an Idempotency-Key (docs/api.md, "Runs"): the key names one run of its
-- tenant, so a create sent again after an answer that was lost (a connection dropped at the
-- commit answers 503 although the run was stored) finds the run it made instead of making a
-- second. The clients make one key per create and send it on every retry. Runs created without
-- a key have none; the key's shape (1 to 255 visible ASCII characters) is checked at the edge.
--
-- A nullable column without a default: a catalog change, no rewrite of the table.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS idempotency_key text;

-- `runs` holds a row per run (a workflow's, not a task's): small beside `tasks`, so the index is
-- built here, in the migration's transaction, which holds up the runs' writes while it builds.
-- On a runs table large enough for that to matter, build it first without blocking writes,
--   CREATE UNIQUE INDEX CONCURRENTLY runs_app_idempotency_key_idx ON runs (app_id, idempotency_key)
--       WHERE idempotency_key IS NOT NULL;
-- (same name, same definition): this migration then finds it and builds nothing.
CREATE UNIQUE INDEX IF NOT EXISTS runs_app_idempotency_key_idx ON runs (app_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
