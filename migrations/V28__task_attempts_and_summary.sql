-- Each attempt of a task on record (GET /v1/tasks/{taskId}/attempts), and the tenant's tasks by
-- creation time (GET /v1/summary). docs/api.md, "History".
--
-- An attempt is recorded where the task's row changes anyway, by a BEFORE UPDATE trigger that
-- rewrites the new row version: no statement, no round trip and no row is added to the path of a
-- task, and the statements that move a task (sql/lease, sql/settle, sql/sweep, sql/batch,
-- sql/cancel) stay as they are. The trigger fires only when a task enters or leaves `running`
-- (its WHEN clause; every other update, a heartbeat say, skips it before the function runs):
--
-- - entering `running` (a worker's claim, lease/claim_by.sql, or a provider batch's, batch_form/form_batch_open.sql)
--   notes when this attempt started (`attempt_started_at`);
-- - leaving it with the attempt counted appends one element to `attempt_log`: the attempt's
--   number, start and end, how it ended (the status it left the task in: `succeeded`, `failed`,
--   `canceled`, or `retried` for back in the queue: settle/requeue_attempt.sql, or the sweeper's
--   stale-heartbeat requeue, sweep/expire_running.sql), the error code and message it left
--   (a retried attempt's error was overwritten by the next attempt's before), and a succeeded
--   attempt's usage (tokens, the model and profile that answered, the estimated cost: no output);
-- - leaving it with the attempt uncounted (given back unworked at a provider limit,
--   settle/give_back.sql; a claim its worker stopped waiting for, lease/give_back_claims.sql; a batch that
--   will not answer, batches/give_back_batch.sql; a batch answer sent to its on-demand repair,
--   repair/give_back_for_repair.sql: each lowers `attempts`) records nothing: the same attempt number runs
--   again.
--
-- Bounded: an attempt is recorded once per counted attempt, and `attempts <= max_attempts <= 100`
-- (tasks_attempt_budget_check); the log keeps its last 100 elements whatever happens, and an
-- error message at most 2,000 characters (the task's own bound). The log holds no model output:
-- it goes with its task's row (a released task deleted after retention, a scope's tasks deleted).
ALTER TABLE tasks
    ADD COLUMN IF NOT EXISTS attempt_started_at timestamptz,
    ADD COLUMN IF NOT EXISTS attempt_log jsonb;

CREATE OR REPLACE FUNCTION tasks_record_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = 'running' THEN
        NEW.attempt_started_at := now();
    ELSIF NEW.attempts >= OLD.attempts THEN
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
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS tasks_record_attempt ON tasks;
CREATE TRIGGER tasks_record_attempt BEFORE UPDATE OF status ON tasks
    FOR EACH ROW WHEN ((OLD.status = 'running') <> (NEW.status = 'running'))
    EXECUTE FUNCTION tasks_record_attempt();

-- GET /v1/summary reads a tenant's tasks created in a window, newest first: without this index it
-- would read every tenant's tasks.
CREATE INDEX IF NOT EXISTS tasks_app_created_idx ON tasks (app_id, created_at);
