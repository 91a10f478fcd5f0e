-- GET /v1/runs/{runId}/progress: the run (of this application only) and its tasks counted by
-- status now. Bounded however large the run: its first :counted_max + 1 tasks by id are read
-- (tasks_run_list_idx, migrations/V15, and their rows), and `more` says it has others. No row
-- for another application's or a missing run.
SELECT r.id, r.state, c.queued, c.running, c.succeeded, c.failed, c.canceled, c.more
FROM runs r
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE t.status = 'queued' AND t.n <= :counted_max::bigint) AS queued,
        count(*) FILTER (WHERE t.status = 'running' AND t.n <= :counted_max::bigint) AS running,
        count(*) FILTER (WHERE t.status = 'succeeded' AND t.n <= :counted_max::bigint) AS succeeded,
        count(*) FILTER (WHERE t.status = 'failed' AND t.n <= :counted_max::bigint) AS failed,
        count(*) FILTER (WHERE t.status = 'canceled' AND t.n <= :counted_max::bigint) AS canceled,
        count(*) > :counted_max::bigint AS more
    FROM (SELECT status, row_number() OVER (ORDER BY tasks.id) AS n
          FROM (SELECT status, id FROM tasks WHERE tasks.run_id = r.id ORDER BY tasks.run_id, tasks.id
                LIMIT :counted_max::bigint + 1) tasks) t
) c
WHERE r.id = :run_id AND r.app_id = :app_id
