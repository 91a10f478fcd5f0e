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
events AS (
    -- The transactional outbox: one event for every row this statement made terminal.
    INSERT INTO task_events (task_id, app_id, payload)
    SELECT id, app_id,
        jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id,
            'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status,
            'errorCode', error_code,
            'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
    FROM settled WHERE status IN ('succeeded', 'failed', 'canceled')
    RETURNING id, task_id, payload
),
freed AS (
    -- A failed or canceled scoped task frees its logical step.
    UPDATE scope_admissions SET logical_key = NULL
    WHERE task_id IN (SELECT id FROM settled WHERE status IN ('failed', 'canceled'))
),
ended AS (
    -- Every scoped task that ended lowers its application's active count, in its scope's shard.
    UPDATE app_concurrency SET active = GREATEST(active - ended_count, 0)
    FROM (SELECT app_id AS ended_app, scope_shard(scope_id) AS ended_shard, count(*)::int AS ended_count
          FROM settled
          WHERE cache_key IS NOT NULL AND status IN ('succeeded', 'failed', 'canceled')
          GROUP BY 1, 2) ended_rows
    WHERE app_concurrency.app_id = ended_app AND app_concurrency.shard = ended_shard
)
SELECT id, task_id, payload FROM events
