-- The tenant's activity over time (GET /v1/activity, docs/api.md "Activity"): tasks created,
-- ended by status, failures by error code, queue wait and run time as histograms, and usage,
-- counted as they happen into minute rows, so that a read of any window costs its buckets,
-- never its tasks.
--
-- Who writes a row, and why no writer waits for another: a row is keyed by the tenant, its
-- minute, the task's model and `writer`, the Postgres backend that counted into it
-- (pg_backend_pid()). A backend runs one transaction at a time, so two transactions never
-- write the same row at once: counting takes no lock another task's statement holds, on the
-- hot path or in a page of thousands (no lock order, no deadlock, no serialisation of a
-- tenant's settles on one row). A writer can wait only for a fold statement of the sweeper
-- that holds its row, which takes no other lock. The sweeper's `foldActivity` duty folds a
-- closed minute's rows into two: the minute's one row (writer 0, kept 26 hours, for buckets
-- under an hour) and its hour's row (kept 93 days, for the rest), so that a read's rows are
-- bounded by its window's minutes or hours, not its tasks (docs/api.md gives the bound).
--
-- What is counted, by the triggers below (what follows a change of status, docs/lifecycle.md):
--   * a task inserted: `created` (a result-cache hit, inserted already succeeded, is `succeeded`
--     too, with no usage: it called no model) -- one upsert per statement and model (the
--     statement's transition table holds its inserted rows, which the API's request-size limit
--     keeps to a few megabytes a create);
--   * a task that ends (queued or running to succeeded, failed or canceled): its status, a
--     failure's error code, its queue wait (creation to first start) and, when it ended
--     running, its run time (its last attempt's start to its end), and the usage of its answer.
-- Times are binned on a log scale (histogram_bin): bin b holds (2^((b-1)/2), 2^(b/2)] ms,
-- bin 1 everything to 1.41 ms and bin 56 everything over 2^27.5 ms (about 52 hours); slot 57
-- counts endings with no sample.

CREATE TABLE activity (
    app_id          text NOT NULL,
    starts_at       timestamptz NOT NULL,
    -- 1 (a minute) or 60 (an hour, written by the fold).
    minutes         smallint NOT NULL CHECK (minutes IN (1, 60)),
    -- The backend that counted into the row; 0 once folded.
    writer          integer NOT NULL,
    model_id        text NOT NULL,
    -- The columns that change least come first, the histograms last: an update's WAL record
    -- holds only the span from its first changed byte to its last (a HOT update on the same
    -- page), so an ending logs its counters and the histograms up to its bins, not the row.
    -- The failed tasks by error code: {"CODE": n}.
    failures        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created         bigint NOT NULL DEFAULT 0,
    succeeded       bigint NOT NULL DEFAULT 0,
    failed          bigint NOT NULL DEFAULT 0,
    canceled        bigint NOT NULL DEFAULT 0,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    -- NULL until a usage with a known cost is counted.
    cost_usd        double precision,
    -- The queue-wait and run-time histograms, interleaved so that an ending's two bins lie close
    -- together: slot 2b - 1 counts queue waits in bin b, slot 2b run times in bin b (bins
    -- 1..56, histogram_bin); bin 57 (slots 113, 114) counts endings without a sample, so that an
    -- ending always adds one somewhere (a subscript is never NULL).
    times           integer[] NOT NULL DEFAULT array_fill(0, ARRAY[114]),
    PRIMARY KEY (app_id, minutes, starts_at, writer, model_id)
);
COMMENT ON INDEX activity_pkey IS
    'A tenant''s minutes or hours by time: the read (activity/activity.sql) walks one tenant''s part of one kind only; the triggers'' and the fold''s upserts.';
CREATE INDEX activity_writers_app_idx ON activity (app_id, starts_at) WHERE writer <> 0;
COMMENT ON INDEX activity_writers_app_idx IS
    'A tenant''s minutes not folded yet: an hourly read (activity/activity.sql) adds them to its hours.';
-- The sweeper's walks, oldest first, whatever the tenant: each kind of row by its own index, so
-- no walk reads past rows it does not want.
CREATE INDEX activity_writers_idx ON activity (starts_at) WHERE writer <> 0;
COMMENT ON INDEX activity_writers_idx IS
    'A minute''s rows per backend, until activity/fold_activity.sql folds them.';
CREATE INDEX activity_minutes_idx ON activity (starts_at) WHERE writer = 0 AND minutes = 1;
COMMENT ON INDEX activity_minutes_idx IS
    'Folded minute rows, until activity/prune_activity.sql deletes them after 26 hours.';
CREATE INDEX activity_hours_idx ON activity (starts_at) WHERE minutes = 60;
COMMENT ON INDEX activity_hours_idx IS
    'Hour rows, until activity/prune_activity.sql deletes them after 93 days.';

-- The bin of a duration: 1..56.
CREATE FUNCTION histogram_bin(d interval) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN LEAST(56, GREATEST(1, ceil(2 * log(2, GREATEST(extract(epoch FROM d) * 1000, 1))::numeric)::integer));

-- A histogram with one more in `bin` (unchanged for a NULL bin: no sample).
CREATE FUNCTION histogram_plus(h integer[], bin integer) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN bin IS NULL THEN h ELSE h[:bin - 1] || (h[bin] + 1) || h[bin + 1:] END;

-- Two histograms added bin by bin.
CREATE FUNCTION histogram_add(a integer[], b integer[]) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT array_agg(COALESCE(x, 0) + COALESCE(y, 0) ORDER BY i)
        FROM unnest(a, b) WITH ORDINALITY AS t(x, y, i));
CREATE AGGREGATE histogram_sum(integer[]) (
    SFUNC = histogram_add, STYPE = integer[], INITCOND = '{}'
);

-- Two counts added, held below bigint's limit (a hostile usage repeated cannot overflow it).
CREATE FUNCTION activity_sum(a bigint, b bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN LEAST(a::numeric + b, 9e18)::bigint;

-- Two {"key": n} maps added key by key.
CREATE FUNCTION counts_add(a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT COALESCE(jsonb_object_agg(key, total), '{}'::jsonb)
        FROM (SELECT key, sum(value::bigint) AS total
              FROM (SELECT * FROM jsonb_each_text(a) UNION ALL SELECT * FROM jsonb_each_text(b)) e
              GROUP BY key) s);
CREATE AGGREGATE counts_sum(jsonb) (
    SFUNC = counts_add, STYPE = jsonb, INITCOND = '{}'
);

-- Tasks inserted by one statement, counted once a model: `created`, and what was inserted
-- already ended (a result-cache hit).
CREATE FUNCTION activity_tasks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO activity AS a (app_id, starts_at, minutes, writer, model_id, created, succeeded, failed, canceled)
    SELECT app_id, date_trunc('minute', now(), 'UTC'), 1, pg_backend_pid(), model_id, count(*),
        count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed'),
        count(*) FILTER (WHERE status = 'canceled')
    FROM inserted_tasks
    GROUP BY app_id, model_id
    ORDER BY app_id, model_id
    ON CONFLICT (app_id, starts_at, minutes, writer, model_id) DO UPDATE SET
        created = a.created + EXCLUDED.created,
        succeeded = a.succeeded + EXCLUDED.succeeded,
        failed = a.failed + EXCLUDED.failed,
        canceled = a.canceled + EXCLUDED.canceled;
    RETURN NULL;
END
$$;

-- A task that ended: its status, failure, times and usage.
CREATE FUNCTION activity_task_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    wait_bin integer := 57;
    run_bin integer := 57;
    input bigint := 0;
    output bigint := 0;
    cost double precision;
    failure jsonb := '{}'::jsonb;
BEGIN
    IF NEW.started_at IS NOT NULL THEN
        wait_bin := histogram_bin(NEW.started_at - NEW.created_at);
    END IF;
    IF OLD.status = 'running' THEN
        run_bin := histogram_bin(now() - COALESCE(OLD.attempt_started_at, OLD.started_at, now()));
    END IF;
    IF NEW.status = 'failed' THEN
        failure := jsonb_build_object(COALESCE(left(NEW.error_code, 100), 'UNKNOWN'), 1);
    END IF;
    -- A usage is what a provider answered: hostile. Each figure is held to [0, 1e12] and every
    -- sum saturates (activity_sum), so no answer can make this trigger fail the statement that
    -- ends its task, or the tasks ended beside it.
    IF jsonb_typeof(NEW.usage) = 'object' THEN
        IF jsonb_typeof(NEW.usage->'inputTokens') = 'number' THEN
            input := LEAST(GREATEST((NEW.usage->>'inputTokens')::numeric, 0), 1e12)::bigint;
        END IF;
        IF jsonb_typeof(NEW.usage->'outputTokens') = 'number' THEN
            output := LEAST(GREATEST((NEW.usage->>'outputTokens')::numeric, 0), 1e12)::bigint;
        END IF;
        IF jsonb_typeof(NEW.usage->'estimatedCostUsd') = 'number' THEN
            -- Below 1e-300 is zero: a smaller figure does not fit a double precision.
            cost := CASE WHEN (NEW.usage->>'estimatedCostUsd')::numeric < 1e-300 THEN 0
                         ELSE LEAST((NEW.usage->>'estimatedCostUsd')::numeric, 1e12) END::double precision;
        END IF;
    END IF;
    INSERT INTO activity AS a (app_id, starts_at, minutes, writer, model_id, succeeded, failed,
        canceled, failures, times, input_tokens, output_tokens, cost_usd)
    VALUES (NEW.app_id, date_trunc('minute', now(), 'UTC'), 1, pg_backend_pid(), NEW.model_id,
        (NEW.status = 'succeeded')::int, (NEW.status = 'failed')::int, (NEW.status = 'canceled')::int,
        failure, histogram_plus(histogram_plus(array_fill(0, ARRAY[114]), 2 * wait_bin - 1), 2 * run_bin),
        input, output, cost)
    ON CONFLICT (app_id, starts_at, minutes, writer, model_id) DO UPDATE SET
        succeeded = a.succeeded + EXCLUDED.succeeded,
        failed = a.failed + EXCLUDED.failed,
        canceled = a.canceled + EXCLUDED.canceled,
        failures = CASE WHEN EXCLUDED.failures = '{}'::jsonb THEN a.failures
                        ELSE counts_add(a.failures, EXCLUDED.failures) END,
        times[2 * wait_bin - 1] = a.times[2 * wait_bin - 1] + 1,
        times[2 * run_bin] = a.times[2 * run_bin] + 1,
        input_tokens = activity_sum(a.input_tokens, EXCLUDED.input_tokens),
        output_tokens = activity_sum(a.output_tokens, EXCLUDED.output_tokens),
        cost_usd = CASE WHEN EXCLUDED.cost_usd IS NULL THEN a.cost_usd
                        ELSE COALESCE(a.cost_usd, 0) + EXCLUDED.cost_usd END;
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_activity_inserted AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS inserted_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION activity_tasks_inserted();
-- AFTER: once the statement holds all its task locks (as tasks_scoped_ended, V38).
CREATE TRIGGER tasks_activity_ended AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (OLD.status IN ('queued', 'running')
                       AND NEW.status IN ('succeeded', 'failed', 'canceled'))
    EXECUTE FUNCTION activity_task_ended();
