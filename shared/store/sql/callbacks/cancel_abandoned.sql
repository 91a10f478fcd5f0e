-- Tasks nobody waits for any more: of these, the ones not started (queued) whose every callback
-- is gone, and that no create without a callback named (`has_poller`: that caller reads the task,
-- migrations/V23), end `canceled`, so no provider money is spent for nobody. A task with a
-- caller still waiting, or already running, is left alone. With its completion event, and the admission
-- bookkeeping of every transition that ends a scoped task.
WITH settled AS (
    UPDATE tasks
    SET status = 'canceled', cancel_requested_at = COALESCE(cancel_requested_at, now()), output = NULL,
        error_code = :canceled_code,
        error_message = 'The task was canceled: every caller waiting for it is gone.',
        completed_at = now(), updated_at = now()
    WHERE id = ANY(:task_ids) AND status = 'queued' AND NOT has_poller
      AND NOT EXISTS (SELECT 1 FROM task_callbacks
                      WHERE task_callbacks.task_id = tasks.id AND task_callbacks.state IN ('waiting', 'owed'))
    RETURNING id, app_id, run_id, scope_id, cache_key, step_key, effect_key, status, error_code,
        completed_at
),
{{fragments/ended_events}},
{{fragments/free_steps}},
{{fragments/lower_active}}
SELECT id, task_id, payload FROM events
