-- Insert a task of a run. The run row is read FOR SHARE in the same statement, so a cancel of
-- the run waits for this insert to commit (and then cancels the new task), or wins first (and
-- the insert sees the run canceled). One row comes back whenever the run exists: its state,
-- and the new task's database-filled columns (NULL when the effect key was taken).
-- Marked sent as it is inserted (`message_sent_at` now), unless it awaits a provider batch: the
-- create sends its message after the commit, and a send that fails marks it unsent
-- (sweep/mark_unsent.sql). A crash between the commit and the send leaves a task marked sent with
-- no message: the sweeper's lost-message duty sends it (sweep/take_unsent.sql, after
-- AITASK_RESEND_AFTER_MS; docs/lifecycle.md, "A create that crashes before its send").
WITH run AS (
    SELECT id AS owner_run_id, scope_id AS run_scope_id, state AS run_state,
        actor ->> 'userId' AS run_user_id
    FROM runs WHERE id = :run_id AND app_id = :app_id
    FOR SHARE
),
inserted AS (
    INSERT INTO tasks (id, app_id, run_id, scope_id, usage_user_id, step_key, effect_key, kind,
        request, input_hash, model_id, model_ref, model_config_hash, max_attempts, trace_header,
        deferred_by, awaiting_batch, has_poller, scope_terms, replay_of, replay_operation, message_sent_at)
    SELECT :id, :app_id, owner_run_id, run_scope_id, run_user_id, :step_key, :effect_key, :kind,
        :request, :input_hash, :model_id, :model_ref, :model_config_hash, :max_attempts, :trace_header,
        now() + :deferred_window_ms::bigint * interval '1 millisecond', :awaiting_batch, :has_poller,
        :scope_terms, :replay_of, :replay_operation, CASE WHEN :awaiting_batch THEN NULL ELSE now() END
    FROM run WHERE run_state = 'running'
    ON CONFLICT (app_id, effect_key) DO NOTHING
    RETURNING id, scope_id, source_id, cache_key, usage_user_id, status, attempts, created_at, updated_at,
        deferred_by, awaiting_batch
)
SELECT run.run_state, inserted.* FROM run LEFT JOIN inserted ON true
