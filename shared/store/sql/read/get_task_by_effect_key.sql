SELECT {{fragments/task_columns}}
FROM tasks WHERE app_id = :app_id AND effect_key = :effect_key
