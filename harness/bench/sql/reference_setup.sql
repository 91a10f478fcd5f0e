-- The reference implementation's table shape (v0.6 + v0.44 of the TypeScript package), in a
-- schema of its own, with one run per benchmark client.
DROP SCHEMA IF EXISTS ref CASCADE;
CREATE SCHEMA ref;
CREATE TABLE ref.run (
    id uuid PRIMARY KEY,
    app_id text NOT NULL,
    scope_id text NOT NULL,
    state text NOT NULL DEFAULT 'running',
    cancel_requested_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ref.run (id, app_id, scope_id)
SELECT ('00000000-0000-0000-0000-' || lpad(i::text, 12, '0'))::uuid, 'ref-app', 'bench'
FROM generate_series(0, 256) i;
CREATE TABLE ref.workflow_task (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    app_id text NOT NULL,
    run_id uuid REFERENCES ref.run (id) ON DELETE CASCADE,
    usage_subject jsonb,
    step_key text NOT NULL CHECK (char_length(step_key) BETWEEN 1 AND 1000),
    effect_key text NOT NULL UNIQUE CHECK (char_length(effect_key) BETWEEN 1 AND 500),
    kind text NOT NULL CHECK (kind IN ('generate_text', 'classify', 'classify_many', 'extract_data')),
    request jsonb NOT NULL CHECK (jsonb_typeof(request) = 'object' AND octet_length(request::text) <= 100000),
    input_hash text NOT NULL CHECK (char_length(input_hash) = 64),
    model_profile_id text NOT NULL,
    model_ref jsonb,
    scope_id text,
    source_id text,
    cache_key text,
    model_config_hash text,
    released_at timestamptz,
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
    output jsonb,
    usage jsonb,
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    error_code text,
    error_message text CHECK (error_message IS NULL OR char_length(error_message) <= 2000),
    cancel_requested_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    completed_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ai_workflow_task_terminal_check CHECK ((status IN ('succeeded', 'failed', 'canceled')) = (completed_at IS NOT NULL))
);
CREATE INDEX idx_ai_workflow_task_recovery ON ref.workflow_task (status, updated_at, id) WHERE status IN ('queued', 'running');
CREATE INDEX idx_ai_workflow_task_cache ON ref.workflow_task (app_id, scope_id, cache_key) WHERE status = 'succeeded';
