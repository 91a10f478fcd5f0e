-- A result-cache hit: the new task is stored already `succeeded` with the cached output; the
-- trigger on `tasks` writes its completion event (migrations/V38). It spends no budget.
INSERT INTO tasks (id, app_id, run_id, scope_id, usage_subject, usage_user_id, source_id,
    cache_key, step_key, effect_key, kind, request, input_hash, model_id, model_ref,
    model_config_hash, max_attempts, trace_header, deferred_by, awaiting_batch, has_poller, status,
    output, completed_at, scope_terms, replay_of, replay_operation)
VALUES (:id, :app_id, :run_id, :scope_id, :usage_subject, :usage_user_id, :source_id,
    :cache_key, :step_key, :effect_key, :kind, :request, :input_hash, :model_id, :model_ref,
    :model_config_hash, :max_attempts, :trace_header, now() + :deferred_window_ms::bigint * interval '1 millisecond',
    -- A cache hit is done: it waits for no batch.
    :awaiting_batch::boolean AND false, :has_poller, 'succeeded', :output, now(),
    :scope_terms, :replay_of, :replay_operation)
ON CONFLICT (app_id, effect_key) DO NOTHING
RETURNING {{fragments/task_columns}}, {{fragments/ended_event}}
