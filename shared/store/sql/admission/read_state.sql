-- Everything a scoped create's admission decides on, read once under the scope's lock: an
-- existing task with the effect key, a cached output (unless :recompute), the 24 h step and
-- source counts, the scope's active tasks, the token bucket's level, the application's active
-- count across its shards, the system-wide count, and max_connections (for the shared-lock slack, see admission.rs).
--
-- The bucket's refill clamps elapsed time at zero: now() is this transaction's start, which can
-- be earlier than a refill committed by another admission while this one waited for the lock.
SELECT
    (SELECT id FROM tasks WHERE app_id = :app_id AND effect_key = :effect_key) AS existing_id,
    CASE WHEN :recompute::bool THEN NULL
         ELSE (SELECT output FROM tasks
               WHERE app_id = :app_id AND scope_id = :scope_id AND cache_key = :cache_key
                 AND status = 'succeeded'
               ORDER BY completed_at DESC LIMIT 1) END AS cached_output,
    history.source_steps, history.sources, history.seen_source,
    (SELECT count(*) FROM tasks
     WHERE app_id = :app_id AND scope_id = :scope_id AND status IN ('queued', 'running')
       AND cache_key IS NOT NULL) AS scope_active,
    COALESCE((SELECT LEAST(:burst::float8,
                           tokens + GREATEST(extract(epoch FROM now() - refilled_at), 0)
                                    * :tasks_per_minute::float8 / 60.0)
              FROM scope_budgets WHERE app_id = :app_id AND scope_id = :scope_id),
             :burst::float8) AS available,
    (SELECT COALESCE(sum(active), 0)::bigint FROM app_concurrency WHERE app_id = :app_id) AS app_active,
    (SELECT COALESCE(sum(active), 0)::bigint FROM system_concurrency) AS system_active,
    current_setting('max_connections')::bigint AS max_connections
FROM (SELECT count(DISTINCT logical_key) FILTER (WHERE source_id = :source_id) AS source_steps,
             count(DISTINCT source_id) AS sources,
             COALESCE(bool_or(source_id = :source_id), false) AS seen_source
      FROM scope_admissions
      WHERE app_id = :app_id AND scope_id = :scope_id
        AND created_at > now() - interval '24 hours') history
