-- A task's recorded attempts (tasks.attempt_log, written by the tasks_record_attempt trigger,
-- migrations/V28), oldest first, one more than a page holds, and what the answer needs to add
-- the attempt running now. One row with NULL attempt columns for a task of this application
-- without recorded attempts; no row for a missing task or another application's. Reads the
-- task's row by its primary key.
SELECT t.status, t.attempts AS current_attempt, COALESCE(t.attempt_started_at, t.started_at, t.updated_at)
        AS current_started_at,
    a.n, (a.e->>'attempt')::int AS attempt, (a.e->>'startedAt')::timestamptz AS started_at,
    (a.e->>'endedAt')::timestamptz AS ended_at, a.e->>'outcome' AS outcome,
    a.e->>'errorCode' AS error_code, a.e->>'errorMessage' AS error_message,
    a.e->'usage'->>'profile' AS profile, a.e->'usage'->>'model' AS model_id,
    CASE WHEN jsonb_typeof(a.e->'usage'->'inputTokens') = 'number'
         THEN (a.e->'usage'->>'inputTokens')::bigint END AS input_tokens,
    CASE WHEN jsonb_typeof(a.e->'usage'->'outputTokens') = 'number'
         THEN (a.e->'usage'->>'outputTokens')::bigint END AS output_tokens,
    CASE WHEN jsonb_typeof(a.e->'usage'->'estimatedCostUsd') = 'number'
         THEN (a.e->'usage'->>'estimatedCostUsd')::float8 END AS estimated_cost_usd
FROM tasks t
LEFT JOIN LATERAL (
    SELECT e, n FROM jsonb_array_elements(COALESCE(t.attempt_log, '[]'::jsonb)) WITH ORDINALITY AS log(e, n)
    ORDER BY n
    LIMIT :limit
) a ON true
WHERE t.id = :task_id AND t.app_id = :app_id
ORDER BY a.n
