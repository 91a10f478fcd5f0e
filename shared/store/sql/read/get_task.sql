SELECT {{fragments/task_columns}}
FROM tasks WHERE id = :task_id AND app_id = :app_id
