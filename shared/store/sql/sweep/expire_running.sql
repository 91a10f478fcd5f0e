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
    RETURNING {{fragments/task_columns}}
),
{{fragments/ended_tasks_answer}}
