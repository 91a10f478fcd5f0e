-- Tasks nobody waits for any more: of these, the ones not started (queued) whose every callback
-- is gone, and that no create without a callback named (`has_poller`: that caller reads the task,
-- migrations/V23), end `canceled`, so no provider money is spent for nobody. A task with a
-- caller still waiting, or already running, is left alone. What follows each ending (its event, a
-- scoped task's step and count) is written by the trigger on `tasks` (migrations/V38).
UPDATE tasks
SET status = 'canceled', cancel_requested_at = COALESCE(cancel_requested_at, now()), output = NULL,
    error_code = :canceled_code,
    error_message = 'The task was canceled: every caller waiting for it is gone.',
    completed_at = now(), updated_at = now()
WHERE id = ANY(:task_ids) AND status = 'queued' AND NOT has_poller
  AND NOT EXISTS (SELECT 1 FROM task_callbacks
                  WHERE task_callbacks.task_id = tasks.id AND task_callbacks.state IN ('waiting', 'owed'))
RETURNING id, {{fragments/ended_event}}
