-- What the heartbeat duty plans with, one row per tenant with waiting callbacks: how many wait
-- (counted up to :most, so a count costs at most that many index entries a tenant) and how long
-- until its least recently heartbeated one is due (milliseconds: negative when it has been due
-- that long already; due means its last heartbeat is :every_ms old). Both come from task_callbacks_waiting_idx: one probe a
-- tenant for the tenants, one for the oldest, and a range of at most :most for the count
-- (:most 0 counts nothing: the duty asks only when the next one is due).
{{fragments/waiting_tenants}}
SELECT tenants.app_id,
    (SELECT count(*) FROM (
        SELECT 1 FROM task_callbacks
        WHERE state = 'waiting' AND app_id = tenants.app_id
        LIMIT :most
    ) counted) AS waiting,
    ceil(extract(epoch FROM (oldest.heartbeat_at
        + :every_ms::bigint * interval '1 millisecond' - now())) * 1000)::bigint AS due_in_ms
FROM tenants CROSS JOIN LATERAL (
    SELECT heartbeat_at FROM task_callbacks
    WHERE state = 'waiting' AND app_id = tenants.app_id
    ORDER BY heartbeat_at LIMIT 1
) oldest
WHERE tenants.app_id IS NOT NULL
