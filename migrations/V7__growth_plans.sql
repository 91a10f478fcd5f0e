-- Plans that stay right at 100 million tasks (the growth study, docs/growth/PLANS.md).
--
-- 1. Point statements by id. ANALYZE samples 30,000 rows, so on a big table it usually
--    finds none of the few thousand queued or running tasks, and records the partial indexes
--    over them as empty. The planner then preferred a scan of such an index, checking `id` in
--    every entry, over a primary-key descent: claims and message marks scanned the whole
--    queued set, a cancel the whole in-flight set (docs/growth/PLANS.md, "believed empty").
--    Now the only partial index a point statement's status condition can match leads with
--    `id` (tasks_in_flight_idx), so the lookup is a descent whichever index is chosen; the
--    statements about queued tasks compare the status with a value the planner cannot see
--    (store `sql::queued!`), so the sweep indexes over queued tasks are never candidates;
--    and the run index leaves out tasks without a run.
-- 2. The unreleased-sources listing walked every application task of the application
--    (released ones included) and filtered row by row, and its cursor was no index condition
--    in the generic plan, so every page started from the application's first entry. It now
--    reads two partial indexes of unreleased tasks, one per statement form.
--
-- On a large table, build the new indexes first with CREATE INDEX CONCURRENTLY (same names);
-- IF NOT EXISTS then skips them here instead of blocking writes while they build.

CREATE INDEX IF NOT EXISTS tasks_in_flight_idx ON tasks (id) WHERE status IN ('queued', 'running');
DROP INDEX IF EXISTS tasks_running_idx;

DROP INDEX IF EXISTS tasks_queued_idx;
CREATE INDEX IF NOT EXISTS tasks_queued_at_idx ON tasks (updated_at) WHERE status = 'queued';
DROP INDEX IF EXISTS tasks_unsent_idx;
CREATE INDEX IF NOT EXISTS tasks_unsent_at_idx ON tasks (message_sent_at NULLS FIRST) WHERE status = 'queued';
DROP INDEX IF EXISTS tasks_run_active_idx;
CREATE INDEX IF NOT EXISTS tasks_run_in_flight_idx ON tasks (run_id)
    WHERE status IN ('queued', 'running') AND run_id IS NOT NULL;

CREATE INDEX IF NOT EXISTS tasks_unreleased_idx ON tasks (app_id, scope_id, source_id)
    WHERE run_id IS NULL AND released_at IS NULL AND source_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_unreleased_step_idx ON tasks (app_id, step_key, scope_id, source_id)
    WHERE run_id IS NULL AND released_at IS NULL AND source_id IS NOT NULL;
