-- GET /v1/summary: an application's tasks created in [:created_after, :created_before), counted
-- by UTC day of creation, model and status, with the tokens and estimated cost of their usage.
--
-- Bounded whatever the application holds: the newest :examine_max tasks of the window are read
-- (tasks_app_created_idx, migrations/V28: only this application's part of it, from the window's
-- end backwards), and one more to know whether there were others (`more`, on every row). No row
-- at all for a window without tasks.
WITH read AS (
    SELECT status, model_id, created_at, usage FROM tasks
    WHERE app_id = :app_id AND created_at >= :created_after::timestamptz
      AND created_at < :created_before::timestamptz
    ORDER BY created_at DESC
    LIMIT :examine_max::bigint + 1
),
numbered AS (
    SELECT status, model_id, created_at, usage, row_number() OVER (ORDER BY created_at DESC) AS n FROM read
),
edge AS (
    SELECT count(*) > :examine_max::bigint AS more FROM read
)
SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, model_id, status, count(*) AS tasks,
    COALESCE(sum(CASE WHEN jsonb_typeof(usage->'inputTokens') = 'number'
                      THEN (usage->>'inputTokens')::bigint END), 0)::bigint AS input_tokens,
    COALESCE(sum(CASE WHEN jsonb_typeof(usage->'outputTokens') = 'number'
                      THEN (usage->>'outputTokens')::bigint END), 0)::bigint AS output_tokens,
    sum(CASE WHEN jsonb_typeof(usage->'estimatedCostUsd') = 'number'
             THEN (usage->>'estimatedCostUsd')::float8 END) AS estimated_cost_usd,
    (SELECT more FROM edge) AS more
FROM numbered
WHERE n <= :examine_max::bigint
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
