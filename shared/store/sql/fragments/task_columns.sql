-- A whole task's columns, in the order `Task::from_row` reads them by name. The one home of this
-- list: every statement that answers a whole task names this file, so a column added to the task
-- is added to every such answer at once (src/statement.rs). create/existing_by_key.sql leaves out
-- `request` on purpose and writes its own list.
id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, cache_key, step_key,
    effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash, status, output,
    usage, attempts, max_attempts, error_code, error_message, cancel_requested_at, heartbeat_at,
    released_at, created_at, started_at, completed_at, updated_at, trace_header, deferred_by, awaiting_batch,
    replay_of, replay_operation
