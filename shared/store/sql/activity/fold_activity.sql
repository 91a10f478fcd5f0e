-- The sweeper's `foldActivity` duty: at most :limit of the rows backends counted into
-- (writer <> 0, migrations/V40) of minutes closed :closed_ms ago, the oldest first, skipping
-- rows a writer or another sweeper holds (activity_writers_idx), folded into two: the minute's
-- one row (writer 0, minutes 1) and its hour's (writer 0, minutes 60). A backend still counting
-- into a folded minute (a transaction that began before it closed) only makes a new row there,
-- folded at a later sweep: nothing is lost or counted twice, since the rows taken are deleted
-- and their sums written by this one statement. The upserts go minute rows first, then hours,
-- each sorted, so two sweepers folding at once take their locks in one order.
WITH taken AS (
    DELETE FROM activity a
    USING (
        SELECT app_id, minutes, starts_at, writer, model_id FROM activity
        WHERE writer <> 0 AND starts_at < now() - :closed_ms::bigint * interval '1 millisecond'
        ORDER BY starts_at
        LIMIT :limit
        FOR UPDATE SKIP LOCKED
    ) t
    WHERE (a.app_id, a.minutes, a.starts_at, a.writer, a.model_id)
        = (t.app_id, t.minutes, t.starts_at, t.writer, t.model_id)
    RETURNING a.*
),
minutes AS (
    SELECT app_id, model_id, starts_at, sum(created) AS created, sum(succeeded) AS succeeded,
        sum(failed) AS failed, sum(canceled) AS canceled, counts_sum(failures) AS failures,
        histogram_sum(times) AS times, LEAST(sum(input_tokens), 9e18)::bigint AS input_tokens,
        LEAST(sum(output_tokens), 9e18)::bigint AS output_tokens, sum(cost_usd) AS cost_usd,
        count(*) AS row_count
    FROM taken
    GROUP BY app_id, model_id, starts_at
),
targets AS (
    SELECT app_id, model_id, starts_at, 1::smallint AS minutes, created, succeeded, failed,
        canceled, failures, times, input_tokens, output_tokens, cost_usd
    FROM minutes
    UNION ALL
    SELECT app_id, model_id, date_trunc('hour', starts_at, 'UTC'), 60::smallint, sum(created),
        sum(succeeded), sum(failed), sum(canceled), counts_sum(failures), histogram_sum(times),
        LEAST(sum(input_tokens), 9e18)::bigint, LEAST(sum(output_tokens), 9e18)::bigint,
        sum(cost_usd)
    FROM minutes
    GROUP BY app_id, model_id, date_trunc('hour', starts_at, 'UTC')
),
written AS (
    INSERT INTO activity AS a (app_id, minutes, starts_at, writer, model_id, created, succeeded,
        failed, canceled, failures, times, input_tokens, output_tokens, cost_usd)
    SELECT app_id, minutes, starts_at, 0, model_id, created, succeeded, failed, canceled, failures,
        times, input_tokens, output_tokens, cost_usd
    FROM targets
    ORDER BY minutes, app_id, starts_at, model_id
    ON CONFLICT (app_id, minutes, starts_at, writer, model_id) DO UPDATE SET
        created = a.created + EXCLUDED.created,
        succeeded = a.succeeded + EXCLUDED.succeeded,
        failed = a.failed + EXCLUDED.failed,
        canceled = a.canceled + EXCLUDED.canceled,
        failures = counts_add(a.failures, EXCLUDED.failures),
        times = histogram_add(a.times, EXCLUDED.times),
        input_tokens = activity_sum(a.input_tokens, EXCLUDED.input_tokens),
        output_tokens = activity_sum(a.output_tokens, EXCLUDED.output_tokens),
        cost_usd = CASE WHEN EXCLUDED.cost_usd IS NULL THEN a.cost_usd
                        ELSE COALESCE(a.cost_usd, 0) + EXCLUDED.cost_usd END
)
SELECT COALESCE(sum(row_count), 0)::bigint AS folded FROM minutes
