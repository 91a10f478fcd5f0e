-- How long until the nearest window end of a deferred task not yet done closes (negative: it
-- has passed), for the deadline alarm: the queued ones (one entry of tasks_queued_deadline_idx) and
-- those in an open batch (its give-up time is its earliest window end less :slack_ms).
SELECT (extract(epoch FROM LEAST(
    (SELECT min(deferred_by) FROM tasks WHERE status = 'queued' AND deferred_by IS NOT NULL),
    (SELECT min(give_up_at) FROM task_batches WHERE state <> 'ended')
        + :slack_ms::bigint * interval '1 millisecond') - now()) * 1000)::float8 AS left_ms
