-- Take an automatic hold's lapsed probe lease (the sweeper's backstop): its first parked task is
-- the probe (among the first 1,000 listed, one its own tenant does not hold: a task held by a
-- hold of its tenant of that profile or of its scope would be parked again without a call), sent now, and no other is sent until two intervals have passed. The probe task's
-- claim calls the held profile (lease/claim_by.sql reads `probe_task`). NULL `probe_task`: no task
-- is parked under the hold now; the next one parked takes the lease (holds/park.sql).
UPDATE holds
SET probe_task = (
        SELECT held.task_id
        FROM (SELECT task_id FROM held_tasks WHERE hold_id = holds.id ORDER BY task_id LIMIT 1000) held
        JOIN tasks ON tasks.id = held.task_id
        WHERE tasks.status = 'queued' AND tasks.message_sent_at = 'infinity'
          AND NOT EXISTS (SELECT 1 FROM holds manual
                          WHERE manual.released_at IS NULL AND manual.app_id = tasks.app_id
                            AND (manual.profile = holds.profile OR manual.scope_id = tasks.scope_id))
        ORDER BY held.task_id LIMIT 1),
    probe_until = now() + 2 * :probe_ms::bigint * interval '1 millisecond'
WHERE id = :hold_id AND released_at IS NULL AND app_id IS NULL
  AND (probe_until IS NULL OR probe_until < now())
RETURNING probe_task, (SELECT app_id FROM tasks WHERE tasks.id = holds.probe_task) AS app_id
