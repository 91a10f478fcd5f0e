-- Running tasks whose heartbeat is older than stale_after_ms: their worker died. Requeued while
-- attempts remain (their message is then owed: take_unsent.sql sends it), else `failed` with
-- WORKFLOW_AI_INTERRUPTED; `canceled` where a cancel was requested. Bounded, SKIP LOCKED.
WITH candidates AS (
    SELECT id AS candidate_id FROM tasks
    WHERE status = 'running' AND heartbeat_at < now() - :stale_after_ms::bigint * interval '1 millisecond'
    ORDER BY heartbeat_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED
),
settled AS (
    UPDATE tasks
    SET status = CASE WHEN cancel_requested_at IS NOT NULL THEN 'canceled'
                      WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
        error_code = CASE WHEN cancel_requested_at IS NOT NULL THEN :canceled_code
                     ELSE :interrupted_code END,
        error_message = CASE WHEN cancel_requested_at IS NOT NULL THEN 'The task was canceled.'
                        ELSE 'The worker stopped sending heartbeats.' END,
        completed_at = CASE WHEN cancel_requested_at IS NOT NULL OR attempts >= max_attempts
                       THEN now() END,
        heartbeat_at = CASE WHEN cancel_requested_at IS NULL AND attempts < max_attempts
                       THEN NULL ELSE heartbeat_at END,
        message_sent_at = CASE WHEN cancel_requested_at IS NULL AND attempts < max_attempts
                          THEN NULL ELSE message_sent_at END,
        -- Taken back from a batch the batcher gave up on (a batch task's heartbeat is the time
        -- it gives up): its result, if it comes, is fenced out.
        batch_id = NULL, output = NULL, updated_at = now()
    FROM candidates WHERE id = candidate_id
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
