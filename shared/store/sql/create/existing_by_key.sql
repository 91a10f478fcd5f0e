-- The tasks of this application with these effect keys (a bulk create's items whose key was taken),
-- as a bulk create answers them: every column but the request, which the answer never holds (a
-- thousand requests read for nothing could be a hundred megabytes).
SELECT id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, cache_key, step_key,
    effect_key, kind, input_hash, model_id, model_ref, model_config_hash, status, output,
    usage, attempts, max_attempts, error_code, error_message, cancel_requested_at, heartbeat_at,
    released_at, created_at, started_at, completed_at, updated_at, trace_header, deferred_by, awaiting_batch,
    replay_of, replay_operation
FROM tasks WHERE app_id = :app_id AND effect_key = ANY(:effect_keys::text[])
