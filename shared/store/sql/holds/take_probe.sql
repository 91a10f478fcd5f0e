-- Take an automatic hold's lapsed probe lease (the sweeper's backstop): its first parked task is
-- the probe, sent now, and no other is sent until two intervals have passed. The probe task's
-- claim calls the held profile (lease/claim_by.sql reads `probe_task`). NULL `probe_task`: no task
-- is parked under the hold now; the next one parked takes the lease (holds/park.sql).
--
-- Bounded: the statement looks at the hold's first 1,000 listed tasks, and deletes those among
-- them that are no longer parked (canceled, ended, deleted: `dead`), so a window filled with them
-- moves on by the next sweep and a task parked behind them is found. A task its own tenant holds
-- (that profile by hand, or its scope) is never the probe: its claim would park it again without
-- a call; park.sql does not list such a task under the automatic hold at all.
WITH window_rows AS (
    SELECT held.task_id,
           tasks.id IS NOT NULL AND tasks.status = 'queued' AND tasks.message_sent_at = 'infinity' AS parked,
           tasks.app_id, tasks.scope_id
    FROM (SELECT task_id FROM held_tasks WHERE hold_id = :hold_id ORDER BY task_id LIMIT 1000) held
    LEFT JOIN tasks ON tasks.id = held.task_id
),
dead AS (
    DELETE FROM held_tasks
    WHERE hold_id = :hold_id AND task_id IN (SELECT task_id FROM window_rows WHERE NOT parked)
)
UPDATE holds
SET probe_task = (
        SELECT candidate.task_id FROM window_rows candidate
        WHERE candidate.parked
          AND NOT EXISTS (SELECT 1 FROM holds manual
                          WHERE manual.released_at IS NULL AND manual.app_id = candidate.app_id
                            AND (manual.profile = holds.profile OR manual.scope_id = candidate.scope_id))
        ORDER BY candidate.task_id LIMIT 1),
    probe_until = now() + 2 * :probe_ms::bigint * interval '1 millisecond'
WHERE id = :hold_id AND released_at IS NULL AND app_id IS NULL
  AND (probe_until IS NULL OR probe_until < now())
RETURNING probe_task, (SELECT app_id FROM tasks WHERE tasks.id = holds.probe_task) AS app_id
