-- A page of a scope's tasks (its application-owned tasks and its runs' tasks) in id order
-- (UUIDv7: creation order), after the previous page's last id, narrowed by kind, model or creation time (and optionally status): list_tasks_of_scope.sql with the
-- bounded walk of history/list_runs.sql.
--
-- At most :examine_max tasks after :after are looked at (`examined`, a walk of
-- tasks_scope_list_idx, migrations/V15), and the filters keep what they keep of those. `edge`
-- always answers one row, with the last task looked at and how many: when the page is short because the walk
-- stopped (n = :examine_max), the next page starts after that task (the caller answers it as
-- `next`), so a filter that matches few tasks answers in several short pages instead of one
-- long scan.
WITH examined AS (
    SELECT id FROM tasks WHERE app_id = :app_id AND scope_id = :scope_id AND id > :after
    ORDER BY app_id, scope_id, id
    LIMIT :examine_max
),
edge AS (
    SELECT (SELECT id FROM examined ORDER BY id DESC LIMIT 1) AS last_examined,
        (SELECT count(*) FROM examined) AS examined
),
page AS (
    SELECT id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, cache_key, step_key,
        effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, status, output,
        usage, attempts, max_attempts, error_code, error_message, cancel_requested_at, heartbeat_at,
        released_at, created_at, started_at, completed_at, updated_at, trace_header, deferred_by, awaiting_batch
    FROM tasks
    WHERE id IN (SELECT id FROM examined) AND app_id = :app_id
      AND (:status::text IS NULL OR status = :status::text)
      AND (:kind::text IS NULL OR kind = :kind::text)
      AND (:model_id::text IS NULL OR model_id = :model_id::text)
      AND (:created_after::timestamptz IS NULL OR created_at >= :created_after::timestamptz)
      AND (:created_before::timestamptz IS NULL OR created_at < :created_before::timestamptz)
    ORDER BY id
    LIMIT :limit
)
SELECT page.*, edge.last_examined, edge.examined
FROM edge
LEFT JOIN page ON true
ORDER BY page.id
