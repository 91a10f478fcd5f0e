-- Events handed over to their writer's publish: the publish mark folded away (issue 51).
--
-- Every completion event used to be written undelivered and marked delivered by a statement of
-- its own once the publish after the commit went through: the fourth statement of a task's life,
-- which held the per-task lifecycle under 0.8x its three-statement floor at 16 and 64 clients
-- (BENCHMARKS.md, 2026-12-06). A worker's completion now writes its event already delivered and
-- handed over (`handed_over`): the worker publishes it right after the commit, and only a
-- publish that fails writes again (sql/events/hand_back.sql, which leaves it to the sweeper).
--
-- What stands behind a handed-over event when the worker dies between the commit and the
-- publish is the task's SQS message: the invocation never answered, so the message comes back
-- once its visibility runs out, and the worker that receives it for an ended task publishes
-- the event again (sql/events/take_handed_over.sql). docs/lifecycle.md, "Completion events",
-- gives that bound. Only statements whose writer has such a message hand events over: they say
-- so with the transaction-local setting `aitasks.hand_over_events` (settle/complete_attempt.sql,
-- settle/complete_many.sql, from process-task); every other ending (the sweeper's, the API's,
-- an operation's, the batcher's) writes its event undelivered, marked after its publish as
-- before.
--
-- A statement that hands events over also learns, for each row, whether the task's ending made
-- callbacks owed (the setting `aitasks.owes_callbacks`, read by its RETURNING): those tasks'
-- callbacks are still taken by the statement after the publish, and no other task needs it.
--
-- The column has a constant default, so adding it rewrites nothing and takes no longer on a big
-- outbox. Its rows are pruned with the delivered ones (a day after `delivered_at`).

ALTER TABLE task_events ADD COLUMN IF NOT EXISTS handed_over boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN task_events.handed_over IS
    'Written delivered by a statement whose writer publishes it after the commit (process-task); published again when the task''s SQS message comes back to an ended task.';

CREATE OR REPLACE FUNCTION task_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ended boolean;
    hand_over boolean;
    owes_callbacks boolean;
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

    -- Handed over: the statement said its writer publishes the event right after the commit
    -- and has the task's SQS message to fall back on (process-task's completions: this migration's header).
    hand_over := current_setting('aitasks.hand_over_events', true) IS NOT DISTINCT FROM 'on';
    INSERT INTO task_events (task_id, app_id, payload, delivered_at, handed_over)
    VALUES (NEW.id, NEW.app_id,
        task_event_payload(NEW.id, NEW.app_id, NEW.run_id, NEW.step_key, NEW.effect_key,
            NEW.status, NEW.error_code, NEW.completed_at),
        CASE WHEN hand_over THEN now() END, hand_over)
    RETURNING id INTO NEW.ended_event_id;

    -- A read first: most tasks have no callback, and an UPDATE would open task_callbacks and all
    -- its indexes for writing whether or not it finds a row (V26). A create attaching a callback
    -- reads the task FOR SHARE, so it waits for this row's lock and then finds the task ended.
    owes_callbacks := EXISTS (SELECT 1 FROM task_callbacks WHERE task_id = NEW.id AND state = 'waiting');
    IF owes_callbacks THEN
        UPDATE task_callbacks SET state = 'owed', due_at = now()
        WHERE task_id = NEW.id AND state = 'waiting';
    END IF;
    -- A handed-over event's publisher takes the owed callbacks only of the tasks that have some:
    -- the row's RETURNING reads this (fragments/owes_callbacks.sql), computed for this row right
    -- after this trigger, with what this probe saw (a callback a create attached while the
    -- statement waited for the row included, which the statement's own snapshot would miss).
    IF hand_over THEN
        PERFORM set_config('aitasks.owes_callbacks', CASE WHEN owes_callbacks THEN 'on' ELSE 'off' END, true);
    END IF;

    -- A scoped task's step (its own row: no other task waits on it); its count, after the row.
    IF NEW.cache_key IS NOT NULL AND NEW.status <> 'succeeded' THEN
        UPDATE scope_admissions SET logical_key = NULL WHERE task_id = NEW.id;
    END IF;
    RETURN NEW;
END
$$;
