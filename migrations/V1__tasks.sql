-- Runs, tasks, the completion-event outbox, and the scoped-inference bookkeeping.
-- Every hot statement is served by one of the partial indexes at the bottom; the sweeps only
-- touch rows in the state they look for, so their cost follows the work, not the table size.

CREATE TABLE runs (
    id                  uuid PRIMARY KEY,
    app_id              text NOT NULL CHECK (char_length(app_id) BETWEEN 1 AND 200),
    scope_id            text NOT NULL CHECK (char_length(scope_id) BETWEEN 1 AND 500),
    state               text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'canceled')),
    actor               jsonb CHECK (actor IS NULL OR jsonb_typeof(actor) = 'object'),
    cancel_requested_at timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT runs_canceled_check CHECK ((state = 'canceled') = (cancel_requested_at IS NOT NULL))
);

CREATE TABLE tasks (
    id                  uuid PRIMARY KEY,
    app_id              text NOT NULL CHECK (char_length(app_id) BETWEEN 1 AND 200),
    -- Exactly one owner: a run, or the application itself (scope_id, usage_subject).
    run_id              uuid REFERENCES runs (id) ON DELETE CASCADE,
    scope_id            text CHECK (scope_id IS NULL OR char_length(scope_id) BETWEEN 1 AND 500),
    usage_subject       jsonb CHECK (usage_subject IS NULL OR jsonb_typeof(usage_subject) = 'object'),
    usage_user_id       text CHECK (usage_user_id IS NULL OR char_length(usage_user_id) BETWEEN 1 AND 500),
    -- Scoped inference: the source a task reads and its result-cache key.
    source_id           text CHECK (source_id IS NULL OR char_length(source_id) BETWEEN 1 AND 500),
    cache_key           text CHECK (cache_key IS NULL OR char_length(cache_key) = 64),
    step_key            text NOT NULL CHECK (char_length(step_key) BETWEEN 1 AND 1000),
    effect_key          text NOT NULL CHECK (char_length(effect_key) BETWEEN 1 AND 500),
    kind                text NOT NULL
                        CHECK (kind IN ('generate_text', 'classify', 'classify_many', 'extract_data')),
    request             jsonb NOT NULL CHECK (jsonb_typeof(request) = 'object'),
    input_hash          text NOT NULL CHECK (char_length(input_hash) = 64),
    model_id            text NOT NULL CHECK (char_length(model_id) BETWEEN 1 AND 120),
    model_ref           jsonb,
    model_config_hash   text CHECK (model_config_hash IS NULL OR char_length(model_config_hash) = 64),
    status              text NOT NULL DEFAULT 'queued'
                        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
    output              jsonb,
    usage               jsonb,
    attempts            integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts        integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
    error_code          text CHECK (error_code IS NULL OR char_length(error_code) BETWEEN 1 AND 100),
    error_message       text CHECK (error_message IS NULL OR char_length(error_message) <= 2000),
    cancel_requested_at timestamptz,
    heartbeat_at        timestamptz,
    -- When the task's SQS message was last sent; NULL while a send is owed.
    message_sent_at     timestamptz,
    released_at         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    started_at          timestamptz,
    completed_at        timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    -- Named: the store maps a violation of this one to "request too large" (HTTP 413).
    CONSTRAINT tasks_request_size_check CHECK (octet_length(request::text) <= 100000),
    CONSTRAINT tasks_terminal_check
        CHECK ((status IN ('succeeded', 'failed', 'canceled')) = (completed_at IS NOT NULL)),
    CONSTRAINT tasks_attempt_budget_check CHECK (attempts <= max_attempts),
    CONSTRAINT tasks_owner_check CHECK (run_id IS NOT NULL OR scope_id IS NOT NULL),
    CONSTRAINT tasks_run_owner_check CHECK (run_id IS NULL OR (usage_subject IS NULL AND released_at IS NULL)),
    CONSTRAINT tasks_succeeded_output_check CHECK (status <> 'succeeded' OR output IS NOT NULL),
    CONSTRAINT tasks_failed_code_check CHECK (status NOT IN ('failed', 'canceled') OR error_code IS NOT NULL),
    CONSTRAINT tasks_running_heartbeat_check CHECK (status <> 'running' OR heartbeat_at IS NOT NULL),
    -- Effect keys are per application: two apps never collide or see each other's keys.
    CONSTRAINT tasks_effect_key_unique UNIQUE (app_id, effect_key)
);

-- Queue timeout: queued tasks by the time they entered the queue.
CREATE INDEX tasks_queued_idx ON tasks (updated_at, id) WHERE status = 'queued';
-- Re-send: queued tasks whose message is owed (NULL) or was sent long ago.
CREATE INDEX tasks_unsent_idx ON tasks (message_sent_at NULLS FIRST, id) WHERE status = 'queued';
-- Stale running tasks by heartbeat.
CREATE INDEX tasks_running_idx ON tasks (heartbeat_at, id) WHERE status = 'running';
-- Cancelling a run touches only its unfinished tasks.
CREATE INDEX tasks_run_active_idx ON tasks (run_id) WHERE status IN ('queued', 'running');
-- Result cache lookups (never a scan of the scope).
CREATE INDEX tasks_cache_idx ON tasks (app_id, scope_id, cache_key, completed_at DESC)
    WHERE status = 'succeeded' AND cache_key IS NOT NULL;
-- Application-owned data by scope and source: deletion and the unreleased-sources listing.
CREATE INDEX tasks_app_source_idx ON tasks (app_id, scope_id, source_id) WHERE run_id IS NULL;
-- Retention: released application tasks, by the later of release and completion.
CREATE INDEX tasks_retention_idx ON tasks ((GREATEST(released_at, completed_at)), id)
    WHERE run_id IS NULL AND released_at IS NOT NULL AND completed_at IS NOT NULL;

-- Transactional outbox: one row per terminal transition, written in the same statement.
CREATE TABLE task_events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id      uuid NOT NULL,
    app_id       text NOT NULL,
    payload      jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- The inline publisher has until then; after it the sweeper may (re)deliver.
    available_at timestamptz NOT NULL DEFAULT now() + interval '30 seconds',
    delivered_at timestamptz
);
CREATE INDEX task_events_pending_idx ON task_events (available_at, id) WHERE delivered_at IS NULL;
CREATE INDEX task_events_delivered_idx ON task_events (delivered_at) WHERE delivered_at IS NOT NULL;
CREATE INDEX task_events_task_idx ON task_events (task_id);

-- Token bucket per (app, scope).
CREATE TABLE scope_budgets (
    app_id      text NOT NULL,
    scope_id    text NOT NULL,
    tokens      double precision NOT NULL CHECK (tokens >= 0),
    refilled_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, scope_id)
);

-- Admission history: one row per admitted scoped task, kept when the task's data is deleted so
-- that deleting cannot reset a budget. logical_key is cleared when the task fails or is
-- canceled, which frees its logical step.
CREATE TABLE scope_admissions (
    task_id     uuid PRIMARY KEY,
    app_id      text NOT NULL,
    scope_id    text NOT NULL,
    source_id   text NOT NULL,
    logical_key text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scope_admissions_source_idx ON scope_admissions (app_id, scope_id, source_id, created_at);
CREATE INDEX scope_admissions_scope_idx ON scope_admissions (app_id, scope_id, created_at);
CREATE INDEX scope_admissions_created_idx ON scope_admissions (created_at);
