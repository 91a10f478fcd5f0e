-- The admitting write of a scoped create (after read_state.sql decided the budgets allow it),
-- under the scope's advisory lock and the application's lock (shared or exclusive: see
-- admission.rs). In one statement: raise the application's active count in the shard of this
-- scope and check the cap against every shard, and the optional system-wide cap (:system_cap,
-- NULL for none) against the system-wide count; only when within both and the token bucket had
-- a token (:rate_ok), spend the token, insert the task and record its admission. One row comes
-- back: within_cap, within_system_cap, and the inserted task's columns (NULL when nothing was
-- inserted). The caller rolls back whenever nothing was inserted.
-- Marked sent as it is inserted (`message_sent_at` now), unless it awaits a provider batch: the
-- create sends its message after the commit, and a send that fails marks it unsent
-- (sweep/mark_unsent.sql). A crash between the commit and the send leaves a task marked sent with
-- no message: the sweeper's lost-message duty sends it (sweep/take_unsent.sql, after
-- AITASK_RESEND_AFTER_MS; docs/lifecycle.md, "A create that crashes before its send").
WITH counted AS (
    INSERT INTO app_concurrency (app_id, shard, active) VALUES (:app_id, scope_shard(:scope_id), 1)
    ON CONFLICT (app_id, shard) DO UPDATE SET active = app_concurrency.active + 1
    RETURNING active
),
within AS (
    -- :uncounted_sessions: admissions other sessions may hold uncommitted under the shared lock.
    SELECT counted.active + :uncounted_sessions::bigint
           + COALESCE((SELECT sum(active) FROM app_concurrency
                       WHERE app_id = :app_id AND shard <> scope_shard(:scope_id)), 0)
           <= :app_cap::bigint AS ok
    FROM counted
),
within_system AS (
    -- The raise above reaches system_concurrency through its trigger, invisible to this
    -- statement's snapshot: hence the 1. :system_uncounted: as :uncounted_sessions, for the
    -- system-wide lock.
    SELECT :system_cap::bigint IS NULL
           OR 1 + :system_uncounted::bigint
              + (SELECT COALESCE(sum(active), 0) FROM system_concurrency) <= :system_cap::bigint AS ok
),
admitted AS (
    SELECT 1 FROM within, within_system WHERE within.ok AND within_system.ok AND :rate_ok::bool
),
bucket AS (
    INSERT INTO scope_budgets (app_id, scope_id, tokens, refilled_at)
    SELECT :app_id, :scope_id, :tokens_after, now() FROM admitted
    ON CONFLICT (app_id, scope_id) DO UPDATE SET tokens = EXCLUDED.tokens, refilled_at = now()
),
inserted AS (
    INSERT INTO tasks (id, app_id, run_id, scope_id, usage_subject, usage_user_id, source_id,
        cache_key, step_key, effect_key, kind, request, input_hash, model_id, model_ref,
        model_config_hash, max_attempts, trace_header, deferred_by, awaiting_batch, has_poller,
        scope_terms, replay_of, replay_operation, message_sent_at)
    SELECT :id, :app_id, :run_id, :scope_id, :usage_subject, :usage_user_id, :source_id,
        :cache_key, :step_key, :effect_key, :kind, :request, :input_hash, :model_id, :model_ref,
        :model_config_hash, :max_attempts, :trace_header, now() + :deferred_window_ms::bigint * interval '1 millisecond', :awaiting_batch, :has_poller,
        :scope_terms, :replay_of, :replay_operation, CASE WHEN :awaiting_batch THEN NULL ELSE now() END
    FROM admitted
    ON CONFLICT (app_id, effect_key) DO NOTHING
    -- Only what the database fills in: the rest of the task is what was inserted.
    RETURNING id, scope_id, source_id, cache_key, usage_user_id, status, attempts, created_at, updated_at,
        deferred_by, awaiting_batch
),
history AS (
    -- Kept when the task's data is deleted, so that deleting cannot reset a budget.
    INSERT INTO scope_admissions (task_id, app_id, scope_id, source_id, logical_key)
    SELECT id, :app_id, :scope_id, :source_id, :logical_key FROM inserted
)
SELECT (SELECT ok FROM within) AS within_cap, (SELECT ok FROM within_system) AS within_system_cap, inserted.*
FROM (SELECT 1) one LEFT JOIN inserted ON true
