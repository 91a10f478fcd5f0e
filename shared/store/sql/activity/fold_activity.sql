-- The sweeper's `foldActivity` duty: at most :limit activity rows (migrations/V40) folded, the
-- oldest first, skipping rows a writer or another sweeper holds:
--   * a closed minute's rows, one per backend that counted into it (writer <> 0), into that
--     minute's one row (writer 0), once the minute is :closed_ms old;
--   * a minute's row older than :minutes_kept_hours into its hour's row (minutes 60).
-- A backend still counting into a folded minute (a transaction that began before it closed)
-- only makes a new row there, folded at a later sweep: nothing is lost or counted twice. Each
-- kind of row is walked by its own partial index, so neither walk reads the other's rows.
WITH writers AS (
    SELECT app_id, starts_at, minutes, writer, model_id FROM activity
    WHERE writer <> 0 AND starts_at < now() - :closed_ms::bigint * interval '1 millisecond'
    ORDER BY starts_at
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
),
old_minutes AS (
    SELECT app_id, starts_at, minutes, writer, model_id FROM activity
    WHERE writer = 0 AND minutes = 1 AND starts_at < now() - :minutes_kept_hours::bigint * interval '1 hour'
    ORDER BY starts_at
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
),
taken AS (
    DELETE FROM activity a
    USING (SELECT * FROM writers UNION ALL SELECT * FROM old_minutes) t
    WHERE (a.app_id, a.starts_at, a.minutes, a.writer, a.model_id)
        = (t.app_id, t.starts_at, t.minutes, t.writer, t.model_id)
    RETURNING a.*
),
folded AS (
    SELECT app_id, model_id,
        CASE WHEN starts_at < now() - :minutes_kept_hours::bigint * interval '1 hour'
             THEN date_trunc('hour', starts_at) ELSE starts_at END AS starts_at,
        CASE WHEN starts_at < now() - :minutes_kept_hours::bigint * interval '1 hour'
             THEN 60 ELSE 1 END::smallint AS minutes,
        sum(created) AS created, sum(succeeded) AS succeeded, sum(failed) AS failed,
        sum(canceled) AS canceled, counts_sum(failures) AS failures,
        histogram_sum(wait_ms) AS wait_ms, histogram_sum(run_ms) AS run_ms,
        sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
        sum(cost_usd) AS cost_usd, count(*) AS row_count
    FROM taken
    GROUP BY 1, 2, 3, 4
),
written AS (
    INSERT INTO activity AS a (app_id, starts_at, minutes, writer, model_id, created, succeeded,
        failed, canceled, failures, wait_ms, run_ms, input_tokens, output_tokens, cost_usd)
    SELECT app_id, starts_at, minutes, 0, model_id, created, succeeded, failed, canceled, failures,
        wait_ms, run_ms, input_tokens, output_tokens, cost_usd
    FROM folded
    ORDER BY app_id, starts_at, minutes, model_id
    ON CONFLICT (app_id, starts_at, minutes, writer, model_id) DO UPDATE SET
        created = a.created + EXCLUDED.created,
        succeeded = a.succeeded + EXCLUDED.succeeded,
        failed = a.failed + EXCLUDED.failed,
        canceled = a.canceled + EXCLUDED.canceled,
        failures = counts_add(a.failures, EXCLUDED.failures),
        wait_ms = histogram_add(a.wait_ms, EXCLUDED.wait_ms),
        run_ms = histogram_add(a.run_ms, EXCLUDED.run_ms),
        input_tokens = a.input_tokens + EXCLUDED.input_tokens,
        output_tokens = a.output_tokens + EXCLUDED.output_tokens,
        cost_usd = CASE WHEN EXCLUDED.cost_usd IS NULL THEN a.cost_usd
                        ELSE COALESCE(a.cost_usd, 0) + EXCLUDED.cost_usd END
)
SELECT COALESCE(sum(row_count), 0)::bigint AS folded FROM folded
