-- The reference implementation's statement sequence for one task, on its own table shape:
-- create (the stored-size round trip, then under its global admission lock the existence
-- check, the run lookup and the insert), claim (preceded by its cancellation update, in a
-- transaction of its own), one cancellation poll, its heartbeat, its complete and its wake.
\set key random(1, 4000000000000000000)
SELECT octet_length('{"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}'::jsonb::text) AS bytes;
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended('workflow-ai-admission', 0));
SELECT id FROM ref.workflow_task WHERE effect_key = 'k' || :key;
SELECT app_id, scope_id FROM ref.run WHERE id = ('00000000-0000-0000-0000-' || lpad(:client_id::text, 12, '0'))::uuid
  AND cancel_requested_at IS NULL AND state <> 'canceled';
INSERT INTO ref.workflow_task (app_id, run_id, step_key, effect_key, kind, request, input_hash, model_profile_id, scope_id, status)
VALUES ('ref-app', ('00000000-0000-0000-0000-' || lpad(:client_id::text, 12, '0'))::uuid, 'bench', 'k' || :key, 'classify',
        '{"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}', repeat('0', 64), 'default', 'bench', 'queued')
ON CONFLICT (effect_key) DO NOTHING
RETURNING id AS task_id \gset
COMMIT;
BEGIN;
UPDATE ref.workflow_task AS task SET status = 'canceled', output = NULL, usage = NULL, error_code = 'WORKFLOW_AI_CANCELED',
  error_message = 'Workflow AI task was canceled.', cancel_requested_at = COALESCE(task.cancel_requested_at, now()),
  completed_at = now(), updated_at = now()
WHERE task.id = :task_id AND (task.cancel_requested_at IS NOT NULL OR EXISTS (
  SELECT 1 FROM ref.run run WHERE run.id = task.run_id AND (run.cancel_requested_at IS NOT NULL OR run.state = 'canceled')))
  AND task.status IN ('queued', 'running')
RETURNING task.id;
COMMIT;
UPDATE ref.workflow_task AS task SET status = 'running', attempts = task.attempts + 1, started_at = COALESCE(task.started_at, now()),
  error_code = NULL, error_message = NULL, updated_at = now()
WHERE task.id = :task_id AND task.cancel_requested_at IS NULL AND (task.run_id IS NULL OR EXISTS (
  SELECT 1 FROM ref.run run WHERE run.id = task.run_id AND run.cancel_requested_at IS NULL AND run.state <> 'canceled'))
  AND task.status = 'queued'
RETURNING task.*;
SELECT task.cancel_requested_at IS NOT NULL OR run.cancel_requested_at IS NOT NULL OR COALESCE(run.state = 'canceled', false) AS canceled
FROM ref.workflow_task AS task LEFT JOIN ref.run AS run ON run.id = task.run_id WHERE task.id = :task_id;
UPDATE ref.workflow_task SET updated_at = now() WHERE id = :task_id AND status = 'running';
UPDATE ref.workflow_task AS task SET status = 'succeeded', output = '"pos"', usage = '{"inputTokens": 11}', completed_at = now(), updated_at = now()
WHERE task.id = :task_id AND task.cancel_requested_at IS NULL AND (task.run_id IS NULL OR EXISTS (
  SELECT 1 FROM ref.run run WHERE run.id = task.run_id AND run.cancel_requested_at IS NULL AND run.state <> 'canceled'))
  AND task.status = 'running'
RETURNING task.*;
UPDATE ref.run SET updated_at = now() WHERE id = ('00000000-0000-0000-0000-' || lpad(:client_id::text, 12, '0'))::uuid;
