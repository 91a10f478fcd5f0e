-- Keyset pages of a run's or a scope's tasks (GET /v1/tasks?runId= / ?scopeId=): each listing
-- walks one of these in id order. Two more index entries per insert; BENCHMARKS.md measures what
-- they cost the create path. On a large table, build them first with CREATE INDEX CONCURRENTLY
-- (same names): this migration then finds them and does nothing.
CREATE INDEX IF NOT EXISTS tasks_run_list_idx ON tasks (run_id, id) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_scope_list_idx ON tasks (app_id, scope_id, id) WHERE scope_id IS NOT NULL;
