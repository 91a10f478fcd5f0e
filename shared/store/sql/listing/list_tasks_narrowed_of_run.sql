-- A page of a run's tasks in id order (UUIDv7: creation order), after the previous page's last id,
-- filtered by status, kind, model or creation time: list_tasks_of_run.sql with the bounded walk
-- of history/list_runs.sql. The walk (`examined`) is at most :examine_max tasks after :after, in
-- order along the run's part of tasks_run_list_idx (migrations/V15; the run checked to be this
-- application's, as in list_tasks_of_run.sql, so that the walk reads nothing but the index);
-- fragments/narrowed_page.sql filters it and says where the next page starts.
WITH examined AS (
    SELECT id FROM tasks
    WHERE run_id = (SELECT id FROM runs WHERE id = :run_id AND app_id = :app_id) AND id > :after
    ORDER BY run_id, id
    LIMIT :examine_max
),
{{fragments/narrowed_page}}
