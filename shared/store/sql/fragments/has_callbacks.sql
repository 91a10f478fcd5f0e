-- Whether a task has a callback someone still waits on or is owed: as the statement found the
-- callbacks ('waiting'), or as the trigger on `tasks` left them once the task ended ('owed').
EXISTS (SELECT 1 FROM task_callbacks
        WHERE task_callbacks.task_id = tasks.id AND task_callbacks.state IN ('waiting', 'owed'))
