-- What follows a change of a task's status, in one place: the trigger function below.
--
-- Statements change a task's state (what to write is decided in Rust: settle::decision, for the
-- worker, the batcher and the sweeper alike); everything that follows from the change is written
-- here, by one row trigger on `tasks`, in the statement that made the change:
--
-- | the change                         | what follows                                           |
-- |------------------------------------|--------------------------------------------------------|
-- | enters `running` (a claim)         | the attempt's start (`attempt_started_at`)             |
-- | leaves `running`, attempt counted  | the attempt's record (`attempt_log`, from V28)         |
-- | becomes terminal (update or insert)| its completion event (the outbox), id in `ended_event_id`;|
-- |                                    | its waiting callbacks owed (from V19/V26)              |
-- | a scoped task ends failed/canceled | its logical step freed (a failure uses no budget)      |
-- | a scoped task ends (update)        | its application's active count lowered, in its shard  |
-- | an active scoped task is deleted   | the same count lowered                                 |
--
-- The system-wide count follows the application counts by V11's trigger on app_concurrency.
--
-- Why a trigger and not the statements: the same consequences belonged to a dozen statements
-- (settlements, cancels, sweeps, deletes), spliced in as SQL fragments, plus three triggers;
-- a statement now only says which rows change and how, and cannot leave a consequence out. Why
-- not Rust: each consequence would be a second statement and a round trip after every ending
-- (the lifecycle measured each statement a task costs), and a crash between the two would
-- lose it. Each consequence is written only when it applies (an unscoped task touches no
-- admission table; a task without callbacks only probes for them), which the statements'
-- fragments could not do: every statement opened the admission tables for writing.
--
-- The completion event's id is kept on the task (`ended_event_id`) so the statement that ended
-- it answers the event with the task (RETURNING sees what this BEFORE trigger wrote): the caller
-- publishes it at once after the commit, and the sweeper re-sends it from the outbox otherwise.
-- Its payload is `task_event_payload`, one definition for the outbox and the answer.
--
-- A BEFORE trigger, so the row can carry what it wrote: it runs once the row to change is
-- locked and re-checked (a concurrent change re-evaluates the statement's conditions first), so
-- it writes nothing for a row the statement then leaves alone. The counts are lowered by AFTER
-- triggers of the same function, once the statement holds all its tasks' locks.
--
-- A task in a provider batch gets its own lease (`batch_lease_until`): the time past which the
-- sweeper takes it back if the batcher never gives it back. `heartbeat_at` is a worker's
-- heartbeat only.

ALTER TABLE tasks
    ADD COLUMN IF NOT EXISTS ended_event_id bigint,
    ADD COLUMN IF NOT EXISTS batch_lease_until timestamptz;

-- A running task has a holder's time: a worker's heartbeat on-demand, a lease in a batch. The
-- old check goes first (the tasks running in a batch now are moved to their lease below), and
-- the new one is checked only for rows written from now on: V39 validates it in a transaction of
-- its own, under a lock that lets writes go on, so no write to `tasks` waits for a scan of the
-- whole table.
ALTER TABLE tasks DROP CONSTRAINT tasks_running_heartbeat_check;
UPDATE tasks SET batch_lease_until = heartbeat_at, heartbeat_at = NULL
WHERE status = 'running' AND batch_id IS NOT NULL;
ALTER TABLE tasks ADD CONSTRAINT tasks_running_holder_check CHECK (
    status <> 'running'
    OR (batch_id IS NULL AND heartbeat_at IS NOT NULL)
    OR (batch_id IS NOT NULL AND batch_lease_until IS NOT NULL)) NOT VALID;

-- The completion event's payload (docs/events.md), from the columns of a task that ended; NULL
-- for a task that has not. Columns, not the whole row: a whole-row value would bring the task's
-- request (detoasted) along for eight fields.
CREATE OR REPLACE FUNCTION task_event_payload(id uuid, app_id text, run_id uuid, step_key text,
        effect_key text, status text, error_code text, completed_at timestamptz)
    RETURNS jsonb LANGUAGE sql STABLE
RETURN CASE WHEN status IN ('succeeded', 'failed', 'canceled') THEN
    jsonb_build_object('type', 'task.settled', 'taskId', id, 'appId', app_id,
        'runId', run_id, 'stepKey', step_key, 'effectKey', effect_key, 'status', status,
        'errorCode', error_code,
        'completedAt', to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
END;

CREATE OR REPLACE FUNCTION task_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ended boolean;
BEGIN
    IF TG_WHEN = 'AFTER' AND TG_OP IN ('UPDATE', 'DELETE') THEN
        -- The triggers' WHEN: a scoped task that ended, or an active one deleted. After the row,
        -- so a statement takes every task's lock before any count row's, as statements did when
        -- they lowered the count themselves (a count row taken between two task locks could
        -- close a cycle with a worker holding the second task and ending a task of that count).
        UPDATE app_concurrency SET active = GREATEST(active - 1, 0)
        WHERE app_id = OLD.app_id AND shard = scope_shard(OLD.scope_id);
        RETURN NULL;
    END IF;

    IF TG_OP = 'UPDATE' AND (OLD.status = 'running') <> (NEW.status = 'running') THEN
        IF NEW.status = 'running' THEN
            NEW.attempt_started_at := now();
        ELSIF NEW.attempts >= OLD.attempts THEN
            -- Bounded: the last 100 attempts (attempts <= max_attempts <= 100 anyway), an error
            -- message at most 2,000 characters; never the output.
            NEW.attempt_log := CASE WHEN jsonb_array_length(COALESCE(OLD.attempt_log, '[]'::jsonb)) >= 100
                                    THEN OLD.attempt_log - 0 ELSE COALESCE(OLD.attempt_log, '[]'::jsonb) END
                || jsonb_build_array(jsonb_build_object(
                    'attempt', OLD.attempts,
                    'startedAt', COALESCE(OLD.attempt_started_at, OLD.started_at, OLD.updated_at),
                    'endedAt', now(),
                    'outcome', CASE WHEN NEW.status = 'queued' THEN 'retried' ELSE NEW.status END,
                    'errorCode', CASE WHEN NEW.status <> 'succeeded' THEN NEW.error_code END,
                    'errorMessage', CASE WHEN NEW.status <> 'succeeded' THEN left(NEW.error_message, 2000) END,
                    'usage', CASE WHEN NEW.status = 'succeeded' THEN NEW.usage END));
        END IF;
    END IF;

    IF TG_OP = 'INSERT' AND TG_WHEN = 'BEFORE' THEN
        -- A task stored already ended (a result-cache hit): its event's id now, the event once
        -- the row is in (an INSERT .. ON CONFLICT DO NOTHING runs BEFORE triggers for a row it
        -- then leaves out; AFTER triggers only for the rows inserted).
        NEW.ended_event_id := nextval(pg_get_serial_sequence('task_events', 'id'));
        RETURN NEW;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO task_events (id, task_id, app_id, payload) OVERRIDING SYSTEM VALUE
        VALUES (NEW.ended_event_id, NEW.id, NEW.app_id,
            task_event_payload(NEW.id, NEW.app_id, NEW.run_id, NEW.step_key, NEW.effect_key,
                NEW.status, NEW.error_code, NEW.completed_at));
        -- Never counted active nor given a step; nobody can wait on it yet.
        RETURN NULL;
    END IF;

    ended := NEW.status IN ('succeeded', 'failed', 'canceled')
        AND OLD.status NOT IN ('succeeded', 'failed', 'canceled');
    IF NOT ended THEN
        RETURN NEW;
    END IF;

    INSERT INTO task_events (task_id, app_id, payload)
    VALUES (NEW.id, NEW.app_id,
        task_event_payload(NEW.id, NEW.app_id, NEW.run_id, NEW.step_key, NEW.effect_key,
            NEW.status, NEW.error_code, NEW.completed_at))
    RETURNING id INTO NEW.ended_event_id;

    -- A read first: most tasks have no callback, and an UPDATE would open task_callbacks and all
    -- its indexes for writing whether or not it finds a row (V26). A create attaching a callback
    -- reads the task FOR SHARE, so it waits for this row's lock and then finds the task ended.
    IF EXISTS (SELECT 1 FROM task_callbacks WHERE task_id = NEW.id AND state = 'waiting') THEN
        UPDATE task_callbacks SET state = 'owed', due_at = now()
        WHERE task_id = NEW.id AND state = 'waiting';
    END IF;

    -- A scoped task's step (its own row: no other task waits on it); its count, after the row.
    IF NEW.cache_key IS NOT NULL AND NEW.status <> 'succeeded' THEN
        UPDATE scope_admissions SET logical_key = NULL WHERE task_id = NEW.id;
    END IF;
    RETURN NEW;
END
$$;

-- Replaced by task_status_changed: V28's attempt record and V19/V26's owed callbacks.
DROP TRIGGER IF EXISTS tasks_record_attempt ON tasks;
DROP FUNCTION IF EXISTS tasks_record_attempt();
DROP TRIGGER IF EXISTS task_events_owe_callbacks ON task_events;
DROP FUNCTION IF EXISTS task_callbacks_owe();

CREATE TRIGGER tasks_status_changed BEFORE UPDATE OF status ON tasks
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION task_status_changed();
CREATE TRIGGER tasks_inserted_ended BEFORE INSERT ON tasks
    FOR EACH ROW WHEN (NEW.status IN ('succeeded', 'failed', 'canceled'))
    EXECUTE FUNCTION task_status_changed();
CREATE TRIGGER tasks_inserted_ended_event AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.ended_event_id IS NOT NULL)
    EXECUTE FUNCTION task_status_changed();
CREATE TRIGGER tasks_scoped_ended AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (NEW.cache_key IS NOT NULL AND OLD.status IN ('queued', 'running')
                       AND NEW.status IN ('succeeded', 'failed', 'canceled'))
    EXECUTE FUNCTION task_status_changed();
CREATE TRIGGER tasks_deleted_active AFTER DELETE ON tasks
    FOR EACH ROW WHEN (OLD.cache_key IS NOT NULL AND OLD.status IN ('queued', 'running'))
    EXECUTE FUNCTION task_status_changed();

-- What the indexes are for (V37), where the statements changed.
COMMENT ON INDEX tasks_scope_active_idx IS
    'A scope''s scoped tasks in flight, counted by admission/read_state (index only).';
COMMENT ON INDEX tasks_in_flight_idx IS
    'Queued and running tasks by id: the fences of a running attempt (lease/heartbeat, lease/check, settle/*), cancel/request_cancel, sweep/take_stale_running and sweep/expire_running, stats/backlog.';
