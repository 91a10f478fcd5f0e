-- Does the store owe more task messages than the queue holds? Counts queued tasks whose message
-- was sent before :older_than_ms ago, but no further than one past :in_queue (the queue's own
-- count), so the look costs at most that many index entries (tasks_unsent_idx). Also the cutoff,
-- for take_lost.sql: a restore re-sends exactly the messages sent before it.
SELECT count(owed.one) > :in_queue::bigint AS lost, max(cutoff) AS cutoff
FROM (SELECT now() - :older_than_ms::bigint * interval '1 millisecond' AS cutoff) c
LEFT JOIN LATERAL (
    SELECT 1 AS one FROM tasks
    WHERE status = 'queued' AND NOT awaiting_batch AND message_sent_at < c.cutoff
    LIMIT :in_queue::bigint + 1
) owed ON true
