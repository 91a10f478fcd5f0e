-- Lengths and shapes are checked once, at the edge.
--
-- Postgres rebuilds every CHECK constraint's expression from its stored text each time a
-- statement starts on the table; with 26 of them that was a measurable share of every
-- task write (BENCHMARKS.md). The length and shape limits below are enforced by the request
-- parser (property-tested) and by the store, which truncates error messages. The constraints
-- that keep the state machine and the limits callers rely on stay: status, kind, the terminal
-- and owner rules, the attempt budget, output on success, a code on failure, a heartbeat while
-- running, and the stored request size (HTTP 413).

ALTER TABLE tasks
    DROP CONSTRAINT tasks_app_id_check,
    DROP CONSTRAINT tasks_scope_id_check,
    DROP CONSTRAINT tasks_usage_subject_check,
    DROP CONSTRAINT tasks_usage_user_id_check,
    DROP CONSTRAINT tasks_source_id_check,
    DROP CONSTRAINT tasks_cache_key_check,
    DROP CONSTRAINT tasks_step_key_check,
    DROP CONSTRAINT tasks_effect_key_check,
    DROP CONSTRAINT tasks_request_check,
    DROP CONSTRAINT tasks_input_hash_check,
    DROP CONSTRAINT tasks_model_id_check,
    DROP CONSTRAINT tasks_model_config_hash_check,
    DROP CONSTRAINT tasks_error_code_check,
    DROP CONSTRAINT tasks_error_message_check;
