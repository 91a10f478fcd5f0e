-- The tasks of the run `page` (the statement's alias for it) counted by status over its first
-- :counted_max (by id: creation order), and `more` when it has others: a walk of its part of
-- tasks_run_list_idx (migrations/V15) and those rows, at most :counted_max + 1, however large
-- the run. Spliced after LATERAL by history/list_runs and runs/run_progress.
(
    SELECT count(*) FILTER (WHERE t.status = 'queued' AND t.n <= :counted_max::bigint) AS queued,
        count(*) FILTER (WHERE t.status = 'running' AND t.n <= :counted_max::bigint) AS running,
        count(*) FILTER (WHERE t.status = 'succeeded' AND t.n <= :counted_max::bigint) AS succeeded,
        count(*) FILTER (WHERE t.status = 'failed' AND t.n <= :counted_max::bigint) AS failed,
        count(*) FILTER (WHERE t.status = 'canceled' AND t.n <= :counted_max::bigint) AS canceled,
        count(*) > :counted_max::bigint AS more
    FROM (SELECT status, row_number() OVER (ORDER BY tasks.id) AS n
          FROM (SELECT status, id FROM tasks WHERE tasks.run_id = page.id ORDER BY tasks.run_id, tasks.id
                LIMIT :counted_max::bigint + 1) tasks) t
)
