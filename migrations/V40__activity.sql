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
-- tenant's settles on one row). The sweeper's `foldActivity` duty then folds a closed minute's
-- rows into one (writer 0), and minute rows over a day old into their hour, so that a read's
-- rows are bounded by its window (docs/api.md gives the bound).
--
-- What is counted, by the triggers below (what follows a change of status, docs/lifecycle.md):
--   * a task inserted: `created` (a result-cache hit, inserted already succeeded, is `succeeded`
--     too, with no usage: it called no model) -- one upsert per statement and model;
--   * a task that ends (queued or running to succeeded, failed or canceled): its status, a
--     failure's error code, its queue wait (creation to first start) and, when it ended
--     running, its run time (its last attempt's start to its end), and the usage of its answer.
-- Times are binned on a log scale (histogram_bin): bin b holds (2^((b-1)/2), 2^(b/2)] ms,
-- bin 1 everything to 1.41 ms and bin 56 everything over 2^27.5 ms (about 52 hours).

CREATE TABLE activity (
    app_id          text NOT NULL,
    starts_at       timestamptz NOT NULL,
    -- 1 (a minute) or 60 (an hour, once folded).
    minutes         smallint NOT NULL CHECK (minutes IN (1, 60)),
    -- The backend that counted into the row; 0 once folded.
    writer          integer NOT NULL,
    model_id        text NOT NULL,
    created         bigint NOT NULL DEFAULT 0,
    succeeded       bigint NOT NULL DEFAULT 0,
    failed          bigint NOT NULL DEFAULT 0,
    canceled        bigint NOT NULL DEFAULT 0,
    -- The failed tasks by error code: {"CODE": n}.
    failures        jsonb NOT NULL DEFAULT '{}'::jsonb,
    wait_ms         integer[] NOT NULL DEFAULT array_fill(0, ARRAY[56]),
    run_ms          integer[] NOT NULL DEFAULT array_fill(0, ARRAY[56]),
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    -- NULL until a usage with a known cost is counted.
    cost_usd        double precision,
    PRIMARY KEY (app_id, starts_at, minutes, writer, model_id)
);
COMMENT ON INDEX activity_pkey IS
    'A tenant''s activity by time: the read (history/activity.sql) walks one tenant''s part only; the triggers'' upserts; the fold.';
-- The sweeper's walks, oldest first, whatever the tenant: each kind of row by its own index, so
-- no walk reads past rows it does not want.
CREATE INDEX activity_writers_idx ON activity (starts_at) WHERE writer <> 0;
COMMENT ON INDEX activity_writers_idx IS
    'A minute''s rows per backend, until activity/fold_activity.sql folds them into one.';
CREATE INDEX activity_minutes_idx ON activity (starts_at) WHERE writer = 0 AND minutes = 1;
COMMENT ON INDEX activity_minutes_idx IS
    'Folded minute rows, until activity/fold_activity.sql folds them into their hour.';
CREATE INDEX activity_hours_idx ON activity (starts_at) WHERE minutes = 60;
COMMENT ON INDEX activity_hours_idx IS
    'Hour rows, until activity/prune_activity.sql deletes them.';

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
    SELECT app_id, date_trunc('minute', now()), 1, pg_backend_pid(), model_id, count(*),
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
    wait_bin integer;
    run_bin integer;
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
    IF jsonb_typeof(NEW.usage) = 'object' THEN
        IF jsonb_typeof(NEW.usage->'inputTokens') = 'number' THEN
            input := GREATEST((NEW.usage->>'inputTokens')::numeric, 0)::bigint;
        END IF;
        IF jsonb_typeof(NEW.usage->'outputTokens') = 'number' THEN
            output := GREATEST((NEW.usage->>'outputTokens')::numeric, 0)::bigint;
        END IF;
        IF jsonb_typeof(NEW.usage->'estimatedCostUsd') = 'number' THEN
            cost := (NEW.usage->>'estimatedCostUsd')::double precision;
        END IF;
    END IF;
    INSERT INTO activity AS a (app_id, starts_at, minutes, writer, model_id, succeeded, failed,
        canceled, failures, wait_ms, run_ms, input_tokens, output_tokens, cost_usd)
    VALUES (NEW.app_id, date_trunc('minute', now()), 1, pg_backend_pid(), NEW.model_id,
        (NEW.status = 'succeeded')::int, (NEW.status = 'failed')::int, (NEW.status = 'canceled')::int,
        failure, histogram_plus(array_fill(0, ARRAY[56]), wait_bin),
        histogram_plus(array_fill(0, ARRAY[56]), run_bin), input, output, cost)
    ON CONFLICT (app_id, starts_at, minutes, writer, model_id) DO UPDATE SET
        succeeded = a.succeeded + EXCLUDED.succeeded,
        failed = a.failed + EXCLUDED.failed,
        canceled = a.canceled + EXCLUDED.canceled,
        failures = CASE WHEN EXCLUDED.failures = '{}'::jsonb THEN a.failures
                        ELSE counts_add(a.failures, EXCLUDED.failures) END,
        wait_ms = histogram_plus(a.wait_ms, wait_bin),
        run_ms = histogram_plus(a.run_ms, run_bin),
        input_tokens = a.input_tokens + EXCLUDED.input_tokens,
        output_tokens = a.output_tokens + EXCLUDED.output_tokens,
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
