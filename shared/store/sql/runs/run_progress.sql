-- GET /v1/runs/{runId}/progress: the run (of this application only) and its tasks counted by
-- status now. Bounded however large the run: its first :counted_max + 1 tasks by id are read
-- (fragments/run_task_counts), and `more` says it has others. No row for another application's
-- or a missing run.
SELECT page.id, page.state, c.queued, c.running, c.succeeded, c.failed, c.canceled, c.more
FROM runs page
CROSS JOIN LATERAL {{fragments/run_task_counts}} c
WHERE page.id = :run_id AND page.app_id = :app_id
