-- lease/claim.sql for the records of one SQS batch: every claimable task of :task_ids in one
-- statement. The rows are locked in id order (two workers handed overlapping duplicates lock
-- them in the same order), and the claim's conditions are checked again on each locked row.
-- (SELECT 'queued'::text) and set_config: see lease/claim.sql.
UPDATE tasks
SET status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, now()),
    heartbeat_at = now(), updated_at = now()
WHERE id IN (
    SELECT id FROM tasks
    WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
      AND cancel_requested_at IS NULL AND attempts < max_attempts
    ORDER BY id
    FOR UPDATE)
RETURNING id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, cache_key, step_key,
    effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, status, output,
    usage, attempts, max_attempts, error_code, error_message, cancel_requested_at, heartbeat_at,
    released_at, created_at, started_at, completed_at, updated_at, trace_header,
    set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
