-- After a publish (App::publish): the events the queue and the bus took are marked delivered,
-- and the owed callbacks of the tasks those transitions ended are taken for their call now,
-- hidden from other senders for :lease_ms like sql/callbacks/take_owed_callbacks.sql. One statement for
-- both, so a settlement whose task has no callback costs no more round trips than before.
--
-- `set_config('synchronous_commit', 'off', true)`, evaluated for each event marked: this
-- transaction commits without waiting for the WAL flush. A mark lost in a crash only sends the
-- event again from the sweeper (delivery is at least once, docs/events.md), and a callback's
-- lease lost with it only lets the sweeper answer it again (a second answer finds the token
-- answered). One flush fewer a task (docs/benchmarks/2026-12-03-issue-37-shipped-path-at-the-floor.md).
--
-- The events are looked up one id at a time through the primary key, in id order, and locked
-- as they are found (docs/architecture.md, "A list of ids is looked up one id at a time"), so two
-- marks of the same events wait for each other rather than deadlock. The lock is one WAL record
-- an event more than an update alone.
-- An event already marked keeps its first time (`COALESCE`) rather than being left out by a
-- `delivered_at IS NULL` condition: that condition let the planner read `task_events_pending_idx`
-- whole in place of the key.
WITH marked AS (
    UPDATE task_events SET delivered_at = COALESCE(delivered_at, now())
    WHERE id IN (SELECT event.id
                 FROM (SELECT i FROM generate_subscripts(:event_ids::bigint[], 1) AS i
                       ORDER BY (:event_ids::bigint[])[i]) AS wanted
                 CROSS JOIN LATERAL (SELECT id FROM task_events
                                     WHERE id = (:event_ids::bigint[])[wanted.i]
                                     FOR UPDATE) AS event)
    RETURNING set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
),
taken AS (
    UPDATE task_callbacks
    SET due_at = now() + :lease_ms::bigint * interval '1 millisecond', tries = tries + 1
    WHERE id IN (SELECT id FROM task_callbacks
                 WHERE task_id = ANY(:task_ids) AND state = 'owed' AND due_at <= now()
                 ORDER BY id
                 FOR UPDATE SKIP LOCKED)
    RETURNING id, task_id, kind, token, tries
)
SELECT taken.id, taken.task_id, taken.kind, taken.token, taken.tries, tasks.status, tasks.output,
    tasks.usage, tasks.error_code, tasks.error_message
FROM taken JOIN tasks ON tasks.id = taken.task_id
