-- One profile's deferred tasks awaiting a batch, for the metrics: how many (counted up to :cap,
-- a bounded look) and how long the oldest has waited (one entry of tasks_awaiting_batch_idx).
SELECT
    (SELECT count(*) FROM (SELECT 1 FROM tasks
        WHERE status = 'queued' AND awaiting_batch AND model_id = :profile LIMIT :cap) capped) AS waiting,
    (SELECT (extract(epoch FROM now() - min(created_at)) * 1000)::float8 FROM tasks
     WHERE status = 'queued' AND awaiting_batch AND model_id = :profile) AS oldest_ms
