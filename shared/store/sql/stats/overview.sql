-- What `make stats` prints: tasks by status, and over the tasks that succeeded in the last
-- :window_ms, provider latency percentiles and tokens. An operator's look, not a hot path: it
-- counts the whole table by status (use it on a development stack or a replica).
SELECT
    (SELECT COALESCE(jsonb_object_agg(status, n), '{}') FROM
        (SELECT status, count(*) AS n FROM tasks GROUP BY status) counts) AS by_status,
    count(*) AS recent,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY (usage ->> 'latencyMs')::float8) AS latency_p50_ms,
    percentile_cont(0.99) WITHIN GROUP (ORDER BY (usage ->> 'latencyMs')::float8) AS latency_p99_ms,
    COALESCE(sum((usage ->> 'inputTokens')::bigint), 0)::bigint AS input_tokens,
    COALESCE(sum((usage ->> 'outputTokens')::bigint), 0)::bigint AS output_tokens
FROM tasks
WHERE status = 'succeeded' AND usage IS NOT NULL
  AND completed_at > now() - :window_ms::bigint * interval '1 millisecond'
