-- Insert a task owned by the application. Nothing comes back when the effect key is taken.
-- Marked sent as it is inserted (`message_sent_at` now), unless it awaits a provider batch: the
-- create sends its message after the commit, and a send that fails marks it unsent
-- (sweep/mark_unsent.sql). A crash between the commit and the send leaves a task marked sent with
-- no message: the sweeper's lost-message duty sends it (sweep/take_unsent.sql, after
-- AITASK_RESEND_AFTER_MS; docs/lifecycle.md, "A create that crashes before its send").
INSERT INTO tasks (id, app_id, scope_id, usage_subject, step_key, effect_key, kind, request,
    input_hash, model_id, model_ref, model_config_hash, max_attempts, trace_header, deferred_by, awaiting_batch, has_poller,
    scope_terms, replay_of, replay_operation, message_sent_at)
VALUES (:id, :app_id, :scope_id, :usage_subject, :step_key, :effect_key, :kind, :request,
    :input_hash, :model_id, :model_ref, :model_config_hash, :max_attempts, :trace_header, now() + :deferred_window_ms::bigint * interval '1 millisecond', :awaiting_batch, :has_poller,
    :scope_terms, :replay_of, :replay_operation, CASE WHEN :awaiting_batch THEN NULL ELSE now() END)
ON CONFLICT (app_id, effect_key) DO NOTHING
-- Only what the database fills in: the rest of the task is what was inserted.
RETURNING id, scope_id, source_id, cache_key, usage_user_id, status, attempts, created_at, updated_at,
    deferred_by, awaiting_batch
