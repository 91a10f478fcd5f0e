-- One profile's tasks awaiting a batch, oldest first, locked for the batcher's decision (it
-- holds them in its transaction while it opens a batch or sends them on-demand): at most
-- :max_records, and no more than :max_bytes of requests in all (what one batch file holds).
-- SKIP LOCKED: another batcher's group is left to it (tasks_awaiting_batch_idx).
WITH picked AS (
    SELECT id, created_at, deferred_by, octet_length(request::text) AS bytes FROM tasks
    WHERE status = 'queued' AND awaiting_batch AND model_id = :profile
      -- Too near its window's end for a batch: send_due_now.sql sends it on-demand.
      AND deferred_by >= now() + :slack_ms::bigint * interval '1 millisecond'
    ORDER BY created_at, id LIMIT :max_records
    FOR UPDATE SKIP LOCKED
),
sized AS (
    SELECT id, created_at, deferred_by,
        sum(bytes) OVER (ORDER BY created_at, id) AS running_bytes,
        count(*) OVER () AS picked_count
    FROM picked
)
SELECT id, picked_count, (extract(epoch FROM now() - created_at) * 1000)::float8 AS waited_ms
FROM sized
WHERE running_bytes <= :max_bytes
ORDER BY created_at, id
