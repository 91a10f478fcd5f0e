-- A page of an application's runs in id order (UUIDv7: creation order), after the previous
-- page's last id, optionally of one state and scope and created in [created_after,
-- created_before); each with its tasks counted by status.
--
-- Bounded whatever the application holds: at most :examine_max runs after :after are looked at
-- (`examined`, a walk of runs_app_list_idx, migrations/V27), and the filters keep what they keep
-- of those. `edge` always answers one row, with the last run looked at and how many: when the
-- page is short because the walk stopped (n = :examine_max), the next page starts after that run
-- (the caller answers it as `next`), so a filter that matches few runs answers in several short
-- pages instead of one long scan.
--
-- The counts read each listed run's part of tasks_run_list_idx (migrations/V15) and its rows, at
-- most :counted_max + 1 a run (fragments/run_task_counts): a run with more tasks is counted over
-- its first :counted_max (by id) and says so (`more`).
WITH examined AS (
    SELECT id FROM runs WHERE app_id = :app_id AND id > :after ORDER BY id LIMIT :examine_max
),
edge AS (
    SELECT (SELECT id FROM examined ORDER BY id DESC LIMIT 1) AS last_examined,
        (SELECT count(*) FROM examined) AS examined
),
page AS (
    SELECT r.id, r.app_id, r.scope_id, r.state, r.actor, r.cancel_requested_at, r.created_at, r.updated_at
    FROM runs r
    WHERE r.id IN (SELECT id FROM examined) AND r.app_id = :app_id
      AND (:state::text IS NULL OR r.state = :state::text)
      AND (:scope_id::text IS NULL OR r.scope_id = :scope_id::text)
      AND (:created_after::timestamptz IS NULL OR r.created_at >= :created_after::timestamptz)
      AND (:created_before::timestamptz IS NULL OR r.created_at < :created_before::timestamptz)
    ORDER BY r.id
    LIMIT :limit
)
SELECT page.id, page.app_id, page.scope_id, page.state, page.actor, page.cancel_requested_at,
    page.created_at, page.updated_at, c.queued, c.running, c.succeeded, c.failed, c.canceled, c.more,
    edge.last_examined, edge.examined
FROM edge
LEFT JOIN page ON true
LEFT JOIN LATERAL {{fragments/run_task_counts}} c ON page.id IS NOT NULL
ORDER BY page.id
