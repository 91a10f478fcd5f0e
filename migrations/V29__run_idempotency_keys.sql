-- POST /v1/runs with an Idempotency-Key (docs/api.md, "Runs"): the key names one run of its
-- tenant, so a create sent again after an answer that was lost (a connection dropped at the
-- commit answers 503 although the run was stored) finds the run it made instead of making a
-- second. The clients make one key per create and send it on every retry. Runs created without
-- a key have none; the key's shape (1 to 255 visible ASCII characters) is checked at the edge.
--
-- A nullable column without a default: a catalog change, no rewrite of the table.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS idempotency_key text;
-- Its unique index is built without blocking the runs' writes, by V30.
