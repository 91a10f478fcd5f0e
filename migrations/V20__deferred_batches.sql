-- Deferred tasks and the provider batches that carry them (docs/lifecycle.md, "Deferred tasks").
--
-- A deferred task is `queued` like any task, with `deferred_by` (its creation plus its window)
-- and, while it waits for a batch, `awaiting_batch`: no task message is owed for it (the sweeps
-- that send messages pass it by) and the batcher groups it by profile. Once a batch takes it,
-- it is `running` with an attempt counted and `batch_id` naming the batch; its lease is the
-- attempt as for any worker, so a batch's result settles it through the same fenced statements,
-- and a duplicate or late result changes nothing. Its heartbeat is set to the time the batcher
-- gives the batch up (the window's end less the slack): the stale-running sweep leaves it alone
-- until then, and takes it back if the batcher never does.
CREATE TABLE task_batches (
    id                uuid PRIMARY KEY,
    profile           text NOT NULL CHECK (char_length(profile) BETWEEN 1 AND 120),
    provider          text NOT NULL CHECK (provider IN ('openai', 'anthropic', 'bedrock')),
    -- `submitting`: recorded before the provider is asked (a submit is idempotent on this id);
    -- `submitted`: the provider has it (`provider_batch_id`); `ended`: its tasks are settled or
    -- sent on-demand.
    state             text NOT NULL DEFAULT 'submitting'
                      CHECK (state IN ('submitting', 'submitted', 'ended')),
    provider_batch_id text CHECK (provider_batch_id IS NULL OR char_length(provider_batch_id) BETWEEN 1 AND 2048),
    records           integer NOT NULL CHECK (records > 0),
    -- The earliest window end of its tasks less the slack: past it, what has not answered runs
    -- on-demand.
    give_up_at        timestamptz NOT NULL,
    -- When the batcher looks at it next (a submit to retry, a status to poll), and the hold of
    -- the batcher looking at it now.
    due_at            timestamptz NOT NULL DEFAULT now(),
    tries             integer NOT NULL DEFAULT 0 CHECK (tries >= 0),
    outcome           text CHECK (outcome IS NULL OR outcome IN
                          ('completed', 'failed', 'expired', 'canceled', 'given_up', 'unsubmitted')),
    last_error        text CHECK (last_error IS NULL OR char_length(last_error) <= 2000),
    created_at        timestamptz NOT NULL DEFAULT now(),
    submitted_at      timestamptz,
    ended_at          timestamptz,
    CONSTRAINT task_batches_submitted_check CHECK (state = 'submitting' OR outcome IS NOT NULL OR provider_batch_id IS NOT NULL),
    CONSTRAINT task_batches_ended_check CHECK ((state = 'ended') = (ended_at IS NOT NULL AND outcome IS NOT NULL))
);
-- The batcher's look: open batches by when they are due.
CREATE INDEX task_batches_due_idx ON task_batches (due_at, id) WHERE state <> 'ended';
-- Pruning ended batches after a day.
CREATE INDEX task_batches_ended_idx ON task_batches (ended_at) WHERE state = 'ended';

ALTER TABLE tasks
    ADD COLUMN deferred_by timestamptz,
    ADD COLUMN awaiting_batch boolean NOT NULL DEFAULT false,
    ADD COLUMN batch_id uuid,
    ADD CONSTRAINT tasks_awaiting_batch_check CHECK (NOT awaiting_batch OR deferred_by IS NOT NULL);

-- The batcher's groups: the tasks awaiting a batch, by profile, oldest first.
CREATE INDEX tasks_awaiting_batch_idx ON tasks (model_id, created_at, id)
    WHERE status = 'queued' AND awaiting_batch;
-- A batch's tasks still running in it.
CREATE INDEX tasks_in_batch_idx ON tasks (batch_id) WHERE status = 'running' AND batch_id IS NOT NULL;

-- The message sweeps pass deferred tasks awaiting a batch by (they owe no message), so the
-- index they read leaves them out; queue expiry reads a deferred task by its window's end.
DROP INDEX IF EXISTS tasks_unsent_at_idx;
CREATE INDEX tasks_unsent_at_idx ON tasks (message_sent_at NULLS FIRST)
    WHERE status = 'queued' AND NOT awaiting_batch;
DROP INDEX IF EXISTS tasks_queued_created_idx;
CREATE INDEX tasks_queued_created_idx ON tasks (created_at) WHERE status = 'queued' AND deferred_by IS NULL;
CREATE INDEX tasks_deferred_by_idx ON tasks (deferred_by) WHERE status = 'queued' AND deferred_by IS NOT NULL;

-- What an on-demand repair turn continues from: a batch's answer that failed the checks, kept
-- for the attempt that repairs it (taken by that attempt).
CREATE TABLE task_repairs (
    task_id uuid PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    attempt integer NOT NULL CHECK (attempt >= 1),
    resume  jsonb NOT NULL,
    CONSTRAINT task_repairs_size_check CHECK (octet_length(resume::text) <= 1100000)
);

