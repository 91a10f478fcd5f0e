-- Insert a task owned by the application. Nothing comes back when the effect key is taken.
INSERT INTO tasks (id, app_id, scope_id, usage_subject, step_key, effect_key, kind, request,
    input_hash, model_id, model_ref, model_config_hash, max_attempts, trace_header, deferred_by, awaiting_batch, has_poller,
    scope_terms, replay_of, replay_operation)
VALUES (:id, :app_id, :scope_id, :usage_subject, :step_key, :effect_key, :kind, :request,
    :input_hash, :model_id, :model_ref, :model_config_hash, :max_attempts, :trace_header, now() + :deferred_window_ms::bigint * interval '1 millisecond', :awaiting_batch, :has_poller,
    :scope_terms, :replay_of, :replay_operation)
ON CONFLICT (app_id, effect_key) DO NOTHING
-- Only what the database fills in: the rest of the task is what was inserted.
RETURNING id, scope_id, source_id, cache_key, usage_user_id, status, attempts, created_at, updated_at,
    deferred_by, awaiting_batch
