-- The floor: the three plain statements a task cannot do without (insert, claim, settle), on
-- the same tasks table, one autocommit statement each. Run by pgbench -M prepared.
INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, max_attempts)
VALUES (gen_random_uuid(), 'floor-app', 'bench', 'bench', gen_random_uuid()::text, 'classify',
        '{"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}',
        repeat('0', 64), 'default', 3)
RETURNING id AS task_id \gset
UPDATE tasks SET status = 'running', attempts = attempts + 1, started_at = now(), heartbeat_at = now(), updated_at = now()
WHERE id = :task_id AND status = 'queued';
UPDATE tasks SET status = 'succeeded', output = '"pos"', completed_at = now(), updated_at = now()
WHERE id = :task_id AND status = 'running';
