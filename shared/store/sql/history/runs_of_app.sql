-- A page of an application's runs in id order (UUIDv7: creation order), after the previous
-- page's last id, optionally of one state and created in [created_after, created_before); each
-- with its tasks counted by status. Walks runs_app_list_idx (migrations/V27); the filters read
-- past the runs they skip, at most the application's. The counts read each listed run's part of
-- tasks_run_list_idx (migrations/V15).
SELECT r.id, r.app_id, r.scope_id, r.state, r.actor, r.cancel_requested_at, r.created_at, r.updated_at,
    c.queued, c.running, c.succeeded, c.failed, c.canceled
FROM runs r
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE t.status = 'queued') AS queued,
        count(*) FILTER (WHERE t.status = 'running') AS running,
        count(*) FILTER (WHERE t.status = 'succeeded') AS succeeded,
        count(*) FILTER (WHERE t.status = 'failed') AS failed,
        count(*) FILTER (WHERE t.status = 'canceled') AS canceled
    FROM tasks t
    WHERE t.run_id = r.id
) c
WHERE r.app_id = :app_id AND r.id > :after
  AND (:state::text IS NULL OR r.state = :state::text)
  AND (:created_after::timestamptz IS NULL OR r.created_at >= :created_after::timestamptz)
  AND (:created_before::timestamptz IS NULL OR r.created_at < :created_before::timestamptz)
ORDER BY r.id
LIMIT :limit
