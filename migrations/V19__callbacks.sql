-- Callbacks: who waits for a task without polling (a Step Functions task token, a Lambda
-- durable function's callback id), answered through the outbox (docs/lifecycle.md, "Callbacks").
--
-- A callback is `waiting` while its task lives (the sweeper heartbeats it), `owed` once the task
-- has ended (a success or failure call is due at `due_at`), then `delivered`, `gone` (the caller
-- no longer waits: its token timed out or is unknown) or `refused` (AWS refused the call for
-- good, or it was tried too often). A task can have several: every create that names the task's
-- effect key may bring one, and each is answered.
CREATE TABLE task_callbacks (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id      uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('step_functions', 'lambda_durable')),
    -- The capability itself: sent to AWS only, and cleared once the callback is done with.
    token        text CHECK (token IS NULL OR char_length(token) BETWEEN 1 AND 2048),
    -- The same token attached twice is one callback (a create repeated by its caller).
    token_hash   bytea NOT NULL,
    state        text NOT NULL DEFAULT 'waiting'
                 CHECK (state IN ('waiting', 'owed', 'delivered', 'gone', 'refused')),
    -- Owed: the next call may start then (the backoff, or a sender's hold).
    due_at       timestamptz,
    -- Waiting: the last heartbeat sent (its attach, at first).
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    -- Success or failure calls started.
    tries        integer NOT NULL DEFAULT 0 CHECK (tries >= 0),
    -- What AWS answered last when it did not accept (an error code and message, never a token).
    last_error   text CHECK (last_error IS NULL OR char_length(last_error) <= 2000),
    created_at   timestamptz NOT NULL DEFAULT now(),
    ended_at     timestamptz,
    CONSTRAINT task_callbacks_live_token_check CHECK ((state IN ('waiting', 'owed')) = (token IS NOT NULL)),
    CONSTRAINT task_callbacks_owed_check CHECK ((state = 'owed') = (due_at IS NOT NULL)),
    CONSTRAINT task_callbacks_ended_check CHECK ((state IN ('waiting', 'owed')) = (ended_at IS NULL)),
    CONSTRAINT task_callbacks_token_unique UNIQUE (task_id, token_hash)
);
-- The delivery duty: owed callbacks by when they are due.
CREATE INDEX task_callbacks_owed_idx ON task_callbacks (due_at, id) WHERE state = 'owed';
-- The heartbeat duty: waiting callbacks, least recently heartbeated first.
CREATE INDEX task_callbacks_waiting_idx ON task_callbacks (heartbeat_at, id) WHERE state = 'waiting';

-- Every terminal transition writes its completion event in the same statement (the outbox); the
-- callbacks of that task become owed in the same statement too, by this trigger, so no path
-- that ends a task (a worker, the sweeper, a cancel, a cache hit) can leave its callers waiting.
-- Its UPDATE runs with a snapshot of its own: a callback attached by a create that committed
-- while the transition waited for the task's row is seen. A task without callbacks costs one
-- probe of the unique index.
CREATE FUNCTION task_callbacks_owe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE task_callbacks SET state = 'owed', due_at = now()
    WHERE task_id = NEW.task_id AND state = 'waiting';
    RETURN NULL;
END
$$;
CREATE TRIGGER task_events_owe_callbacks AFTER INSERT ON task_events
    FOR EACH ROW EXECUTE FUNCTION task_callbacks_owe();
