-- Take an automatic hold's lapsed probe lease (the sweeper's backstop): its first parked task is
-- the probe, sent now, and no other is sent until two intervals have passed. The probe task's
-- claim calls the held profile (lease/claim_by.sql reads `probe_task`). NULL `probe_task`: no task
-- is parked under the hold now; the next one parked takes the lease (holds/park.sql).
UPDATE holds
SET probe_task = (
        SELECT held.task_id FROM held_tasks held JOIN tasks ON tasks.id = held.task_id
        WHERE held.hold_id = holds.id AND tasks.status = 'queued' AND tasks.message_sent_at = 'infinity'
        ORDER BY held.task_id LIMIT 1),
    probe_until = now() + 2 * :probe_ms::bigint * interval '1 millisecond'
WHERE id = :hold_id AND released_at IS NULL AND app_id IS NULL
  AND (probe_until IS NULL OR probe_until < now())
RETURNING probe_task, (SELECT app_id FROM tasks WHERE tasks.id = holds.probe_task) AS app_id
