-- Park a claimed task that is held (its scope, or every profile of its chain): given back with its
-- attempt uncounted, and while one of :hold_ids is still active, `message_sent_at = 'infinity'`
-- (no message sweep re-sends it, the queue timeout passes it by) and listed under each such hold
-- for its release. A hold released before this statement's snapshot is not active here, and a
-- task no hold holds any more is given back owed (`message_sent_at` now), as
-- settle/give_back.sql does. A release that commits while this statement runs may send its list
-- before this task is on it: the sweeper sends the lists of holds released in the last hour
-- again (holds/unfinished_holds.sql), so such a task waits a sweep at most. (Locking the holds
-- here instead, FOR SHARE, would make every park of a hold that takes its probe lease upgrade a
-- shared lock many parks hold: they wait on each other.) Fenced on the lease
-- (fragments/attempt_fence.sql).
--
-- Parked under an automatic hold (and under no hold of its own tenant of that profile or of its
-- scope), the task takes the hold's probe lease when it is free or already its own (`probe`: the caller sends its message after :probe_ms; the claim of that
-- message calls the held profile once). The lease lasts two intervals: a probe that never ran
-- leaves it to the sweeper (take_probe.sql).
WITH holding AS (
    SELECT id, app_id, profile, scope_id FROM holds
    WHERE id = ANY(:hold_ids::uuid[]) AND released_at IS NULL
),
parked AS (
    UPDATE tasks
    SET status = 'queued', attempts = attempts - 1, heartbeat_at = NULL, batch_lease_until = NULL, batch_id = NULL,
        message_sent_at = CASE WHEN EXISTS (SELECT 1 FROM holding) THEN 'infinity'::timestamptz
                          ELSE now() END,
        updated_at = now()
    WHERE {{fragments/attempt_fence}}
    RETURNING id, message_sent_at = 'infinity' AS parked
),
listed AS (
    -- Not under an automatic hold when its own tenant holds it too (that profile by hand, or its
    -- scope): it is sent again by that hold's release, and the automatic hold's probe, which
    -- looks at the head of its list (take_probe.sql), never has to pass over it.
    INSERT INTO held_tasks (hold_id, task_id)
    SELECT holding.id, parked.id FROM holding, parked
    WHERE parked.parked
      AND NOT (holding.app_id IS NULL
               AND EXISTS (SELECT 1 FROM holding manual WHERE manual.app_id IS NOT NULL
                           AND (manual.scope_id IS NOT NULL OR manual.profile = holding.profile)))
    ON CONFLICT DO NOTHING
),
probing AS (
    UPDATE holds
    SET probe_task = :task_id, probe_until = now() + 2 * :probe_ms::bigint * interval '1 millisecond'
    WHERE id IN (SELECT id FROM holding WHERE app_id IS NULL)
      AND EXISTS (SELECT 1 FROM parked WHERE parked.parked)
      -- A task its own tenant holds (the profile by hand, or its scope) never probes: its claim
      -- would park it again without a call, and the lease would never reach another tenant's task.
      AND NOT EXISTS (SELECT 1 FROM holding manual WHERE manual.app_id IS NOT NULL
                      AND (manual.scope_id IS NOT NULL OR manual.profile = holds.profile))
      AND (probe_task = :task_id OR probe_until IS NULL OR probe_until < now())
    RETURNING id
)
SELECT parked.parked, EXISTS (SELECT 1 FROM probing) AS probe FROM parked
