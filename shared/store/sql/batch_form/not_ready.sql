-- Is one profile's group of tasks awaiting a batch ready to form, before any row is locked
-- (form_batch_lock.sql locks them only then): how many await (counted up to :max_records), how long the
-- oldest has waited, and, only for a group that could hold more than :max_bytes of requests
-- (each is at most 100 kB, the tasks_request_size_check of V1), what their requests hold in all.
-- Unlocked and an over-estimate (tasks near their window's end, or held by another batcher, are
-- counted too), so a ready group is never missed; the head comes from tasks_awaiting_batch_idx
-- alone.
WITH head AS MATERIALIZED (
    SELECT id, created_at FROM tasks
    WHERE status = 'queued' AND awaiting_batch AND model_id = :profile
    ORDER BY created_at, id LIMIT :max_records
),
counted AS (
    SELECT count(*) AS awaiting, min(created_at) AS oldest FROM head
)
SELECT awaiting, (extract(epoch FROM now() - oldest) * 1000)::float8 AS waited_ms,
    CASE WHEN awaiting * 100000 > :max_bytes::bigint THEN
        (SELECT sum(octet_length(request::text)) FROM tasks WHERE id IN (SELECT id FROM head))::bigint
    END AS bytes
FROM counted
