-- A caller asks to cancel one of its tasks.
WITH settled AS (
    UPDATE tasks
    SET cancel_requested_at = COALESCE(cancel_requested_at, now()),
        -- A queued task ends at once, and so does one in a provider batch (no worker watches it:
        -- its result is fenced out when it comes); a running one is flagged and its worker settles it when it
        -- notices (within a cancel poll).
        status = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'canceled' ELSE status END,
        completed_at = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN now() ELSE completed_at END,
        error_code = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN :canceled_code ELSE error_code END,
        error_message = CASE WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'The task was canceled.' ELSE error_message END,
        updated_at = now()
    WHERE id = :task_id AND app_id = :app_id AND status IN ('queued', 'running')
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
