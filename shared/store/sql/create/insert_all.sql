-- Insert many tasks in one statement: tasks of runs and tasks owned by the application, side by
-- side, item i of every array being task i. Each item stands alone: a missing or canceled run,
-- or a taken effect key, skips that item only (run tasks exactly as insert_run_task.sql:
-- the runs are read FOR SHARE, so a run's cancel waits for this insert or wins before it).
--
-- Rows go in sorted by effect key: two bulk creates that share keys then take their unique-index
-- entries in the same order and one waits for the other, instead of each holding a key the
-- other needs (a deadlock). A key given twice in one bulk create is inserted once (ON CONFLICT), by
-- its earlier item: item order breaks the tie, so the later item is the one that finds the key
-- taken (docs/api.md).
--
-- One row per item comes back, in item order: its run's state (NULL when it has no run, or the
-- run was not found) and the new task's database-filled columns (NULL when nothing was inserted).
-- Marked sent as it is inserted (`message_sent_at` now), unless it awaits a provider batch: the
-- create sends its message after the commit, and a send that fails marks it unsent
-- (sweep/mark_unsent.sql). A crash between the commit and the send leaves a task marked sent with
-- no message: the sweeper's lost-message duty sends it (sweep/take_unsent.sql, after
-- AITASK_RESEND_AFTER_MS; docs/lifecycle.md, "A create that crashes before its send").
WITH items AS (
    SELECT *
    FROM unnest(:ids::uuid[], :run_ids::uuid[], :scope_ids::text[], :usage_subjects::jsonb[],
        :step_keys::text[], :effect_keys::text[], :kinds::text[], :requests::jsonb[],
        :input_hashes::text[], :model_ids::text[], :model_refs::jsonb[],
        :model_config_hashes::text[], :max_attempts::int[], :trace_headers::text[],
        :deferred_windows_ms::bigint[], :awaiting_batches::boolean[], :has_pollers::boolean[])
        WITH ORDINALITY AS item(id, run_id, scope_id, usage_subject, step_key, effect_key, kind,
            request, input_hash, model_id, model_ref, model_config_hash, max_attempts,
            trace_header, deferred_window_ms, awaiting_batch, has_poller, ord)
),
run AS (
    SELECT id AS owner_run_id, scope_id AS run_scope_id, state AS run_state,
        actor ->> 'userId' AS run_user_id
    FROM runs
    WHERE app_id = :app_id AND id IN (SELECT run_id FROM items WHERE run_id IS NOT NULL)
    ORDER BY id
    FOR SHARE
),
inserted AS (
    INSERT INTO tasks (id, app_id, run_id, scope_id, usage_subject, usage_user_id, step_key,
        effect_key, kind, request, input_hash, model_id, model_ref, model_config_hash,
        max_attempts, trace_header, deferred_by, awaiting_batch, has_poller, message_sent_at)
    SELECT items.id, :app_id, items.run_id, COALESCE(run.run_scope_id, items.scope_id),
        items.usage_subject, run.run_user_id, items.step_key, items.effect_key, items.kind,
        items.request, items.input_hash, items.model_id, items.model_ref,
        items.model_config_hash, items.max_attempts, items.trace_header,
        now() + items.deferred_window_ms * interval '1 millisecond', items.awaiting_batch,
        items.has_poller, CASE WHEN items.awaiting_batch THEN NULL ELSE now() END
    FROM items LEFT JOIN run ON run.owner_run_id = items.run_id
    WHERE items.run_id IS NULL OR run.run_state = 'running'
    ORDER BY items.effect_key, items.ord
    ON CONFLICT (app_id, effect_key) DO NOTHING
    RETURNING id, scope_id, source_id, cache_key, usage_user_id, status, attempts, created_at,
        updated_at, deferred_by, awaiting_batch
)
SELECT items.ord, run.run_state, inserted.*
FROM items
LEFT JOIN run ON run.owner_run_id = items.run_id
LEFT JOIN inserted ON inserted.id = items.id
ORDER BY items.ord
