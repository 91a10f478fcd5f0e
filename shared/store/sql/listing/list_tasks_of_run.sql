-- A page of a run's tasks in id order (UUIDv7: creation order), after the previous page's last
-- id, unfiltered: every row it reads it answers. A filter (status, kind, model, time) is a walked
-- listing (list_tasks_narrowed_of_run.sql). Walks the run's part of tasks_run_list_idx
-- (migrations/V15) in order: the run is checked to be this application's (runs_pkey), and a run's
-- tasks are all its application's, so the walk has no condition on the task's own app_id (with
-- one, the planner may read the whole run through tasks_app_created_idx and sort it).
SELECT {{fragments/task_columns}}
FROM tasks
WHERE run_id = (SELECT id FROM runs WHERE id = :run_id AND app_id = :app_id) AND id > :after
ORDER BY run_id, id
LIMIT :limit
