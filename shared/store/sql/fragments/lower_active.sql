-- Admission bookkeeping, part two: every scoped task (cache_key set) that ended lowers its
-- application's count of active scoped tasks, in the shard of its scope. Reads the tasks that
-- changed from the statement's `settled` (app_id, scope_id, cache_key, status): only those now
-- terminal count. The one home of this part: the loader writes it out in every statement that
-- names it (src/statement.rs).
ended AS (
    UPDATE app_concurrency SET active = GREATEST(active - ended_count, 0)
    FROM (SELECT app_id AS ended_app, scope_shard(scope_id) AS ended_shard, count(*)::int AS ended_count
          FROM settled
          WHERE cache_key IS NOT NULL AND status IN ('succeeded', 'failed', 'canceled')
          GROUP BY 1, 2) ended_rows
    WHERE app_concurrency.app_id = ended_app AND app_concurrency.shard = ended_shard
)
