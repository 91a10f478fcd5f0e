-- A page of a run's tasks in id order (UUIDv7: creation order), after the previous page's last
-- id, optionally of one status. Walks tasks_run_list_idx (migrations/V15); a status filter reads
-- past the tasks it skips, at most one run's worth.
SELECT id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, cache_key, step_key,
    effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, status, output,
    usage, attempts, max_attempts, error_code, error_message, cancel_requested_at, heartbeat_at,
    released_at, created_at, started_at, completed_at, updated_at, trace_header, deferred_by, awaiting_batch
FROM tasks
WHERE run_id = :run_id AND app_id = :app_id AND id > :after
  AND (:status::text IS NULL OR status = :status::text)
ORDER BY id
LIMIT :limit
