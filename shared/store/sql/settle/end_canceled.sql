-- End a task whose cancel was requested `canceled`, whoever notices first (its worker, a claim,
-- or the sweeper). Not fenced on an attempt: a requested cancel wins over any lease.
WITH settled AS (
    UPDATE tasks
    SET status = 'canceled', output = NULL, error_code = :canceled_code,
        error_message = 'The task was canceled.', completed_at = now(), updated_at = now()
    WHERE id = :task_id AND status IN ('queued', 'running') AND cancel_requested_at IS NOT NULL
    RETURNING id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, cache_key, step_key,
        effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, status, output,
        usage, attempts, max_attempts, error_code, error_message, cancel_requested_at, heartbeat_at,
        released_at, created_at, started_at, completed_at, updated_at, trace_header, deferred_by, awaiting_batch
),
events AS (
    -- The transactional outbox: one event for every row this statement made terminal.
    INSERT INTO task_events (task_id, app_id, payload)
    SELECT id, app_id,
        {{fragments/settled_event}}
    FROM settled WHERE status IN ('succeeded', 'failed', 'canceled')
    RETURNING id, task_id, payload
),
{{fragments/free_steps}},
{{fragments/lower_active}}
-- Every row the update touched, with its event when it became terminal (NULL otherwise).
SELECT settled.*, events.id AS event_id, events.payload AS event_payload
FROM settled LEFT JOIN events ON events.task_id = settled.id
