-- Replays and operations (docs/api.md, "Replaying a task" and "Operations").
--
-- A replay is a new task made from an ended one: its request, model, step, owner and scope. The
-- scope's terms (sourceId, sourceRevision, budget) were not kept on a task before: a scoped
-- create now stores them as its create gave them, so that its replay is admitted on the same
-- terms. A scoped task stored before this migration has none and cannot be replayed
-- (TASK_NOT_REPLAYABLE). Nullable columns without a default: catalog changes, no rewrite of the
-- table, and no index on `tasks` (a task's replays are found through task_replays below).
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS scope_terms jsonb;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS replay_of uuid;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS replay_operation uuid;

-- A task's replays, oldest first (GET /v1/tasks/{taskId}/replays): one row per replay, written
-- by the trigger below in the statement that inserts the replay, whatever path inserted it.
CREATE TABLE IF NOT EXISTS task_replays (
    original_id  uuid NOT NULL,
    replay_id    uuid NOT NULL,
    app_id       text NOT NULL,
    operation_id uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (original_id, replay_id)
);

CREATE OR REPLACE FUNCTION record_task_replay() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_replays (original_id, replay_id, app_id, operation_id, created_at)
    VALUES (NEW.replay_of, NEW.id, NEW.app_id, NEW.replay_operation, NEW.created_at)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS tasks_record_replay ON tasks;
CREATE TRIGGER tasks_record_replay AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.replay_of IS NOT NULL) EXECUTE FUNCTION record_task_replay();

-- An operation: cancel or replay every task of a tenant that matches a filter, a page at a time
-- (by the request that creates it, then by the sweeper's `operations` duty). The walk's cursor
-- and the counts are written in the transaction that acts on the page, under the lease (the
-- row locked FOR UPDATE SKIP LOCKED), so a crash resumes from the last page committed.
CREATE TABLE IF NOT EXISTS operations (
    id               uuid PRIMARY KEY,
    app_id           text NOT NULL,
    action           text NOT NULL CHECK (action IN ('cancel', 'replay')),
    -- The filter as the answer shows it (defaults written out).
    filter           jsonb NOT NULL,
    recompute        boolean NOT NULL DEFAULT false,
    state            text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'stopped', 'done')),
    idempotency_key  text,
    -- Where the walk stands: the last task it looked at, by (created_at, id) for a walk of the
    -- whole tenant, by id for a run's or a scope's.
    cursor_at        timestamptz,
    cursor_id        uuid,
    matched          bigint NOT NULL DEFAULT 0,
    done             bigint NOT NULL DEFAULT 0,
    skipped          bigint NOT NULL DEFAULT 0,
    failed           bigint NOT NULL DEFAULT 0,
    skipped_because  jsonb NOT NULL DEFAULT '{}',
    failed_because   jsonb NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    ended_at         timestamptz
);

CREATE UNIQUE INDEX IF NOT EXISTS operations_key_idx ON operations (app_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- A tenant's operations in creation order (ids are UUIDv7), and its running ones (the limit).
CREATE INDEX IF NOT EXISTS operations_app_idx ON operations (app_id, id);
-- The sweeper's turn: the running operation it worked on least recently first.
CREATE INDEX IF NOT EXISTS operations_running_idx ON operations (updated_at, id) WHERE state = 'running';
