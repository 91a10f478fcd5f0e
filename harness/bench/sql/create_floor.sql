-- The create floor: the one plain INSERT a task cannot do without, one autocommit statement a
-- task. Run by pgbench -M prepared.
INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, max_attempts)
VALUES (gen_random_uuid(), 'floor-app', 'bench', 'bench', gen_random_uuid()::text, 'classify',
        '{"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}',
        repeat('0', 64), 'default', 3);
