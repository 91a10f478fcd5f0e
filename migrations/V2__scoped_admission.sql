-- Scoped admission without a global lock.
--
-- Concurrency caps: the scope cap counts active scoped tasks of one scope under that scope's
-- admission lock (an index makes the count cheap). The application-wide cap is a counter row
-- per application, raised with a conditional upsert in the admitting transaction and lowered
-- in the same statement as every transition that ends a scoped task, so it holds exactly
-- without a lock that every scope waits on.

CREATE INDEX tasks_scope_active_idx ON tasks (app_id, scope_id)
    WHERE status IN ('queued', 'running') AND cache_key IS NOT NULL;

CREATE TABLE app_concurrency (
    app_id text PRIMARY KEY,
    active integer NOT NULL DEFAULT 0 CHECK (active >= 0)
);
