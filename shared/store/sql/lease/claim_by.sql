-- Claim the next attempt of the tasks an SQS delivery names (one task or ten), in one statement:
-- only a queued task whose cancel was not requested and whose attempt budget is not spent. The
-- lease is (id, the new attempts). The rows are taken in id order, and SKIP LOCKED: a claim
-- never waits on a row lock (another worker claiming a duplicate, a create marking its message
-- sent), so it answers in time or not at all; a row it skipped is `busy` (claim_by_misses.sql) and
-- its record comes back a moment later.
--
-- The given ids are looked up one at a time, each through the primary key (`wanted`, in id
-- order, and a LATERAL lookup of that one row), not with `id = ANY(:task_ids)`: a plan that must
-- not depend on how big the planner believes `tasks` is (docs/architecture.md, "A list of ids is
-- looked up one id at a time"; tests/store/young_tables.rs).
--
-- `status = (SELECT 'queued'::text)`: ANALYZE samples 30,000 rows, so on a big table it records
-- the partial indexes over queued tasks as empty, and the planner would then scan one of them
-- filtering on id instead of descending the primary key. A value the planner cannot see (an
-- init plan) keeps those indexes out of the choice (docs/growth/PLANS.md, "believed empty").
--
-- `set_config('synchronous_commit', 'off', true)`: this transaction commits without waiting for
-- the WAL flush. A claim lost in a crash puts the task back in the queue with its attempt
-- uncounted; its worker's next cancel poll finds the lease gone and stops, and settlement stays
-- exactly once (fenced on the task still running). Half the flushes a task waits for.
--
-- The rows are marked with the statement's :claim_token, and none is taken at or after
-- :claim_by (the worker's own limit for the answer, checked on each row as it is taken, also
-- when the statement itself waited, on a table lock say): a claim cannot take a task after its
-- worker stopped waiting, and a worker that stopped waiting gives back what its claim took
-- before, uncounted (give_back_claims.sql).
-- A claim clears `batch_id` and `awaiting_batch`: an on-demand attempt belongs to no provider
-- batch (a deferred task given back by one, or named by a stray message; migrations/V20).
--
-- Each row comes with the active holds that may touch it (`active_holds`, migrations/V34): its
-- tenant's holds of a profile and of its scope, and the automatic holds, read from the small
-- `holds` table through its partial indexes of active holds. So a worker knows the holds as of
-- its claim, fresh, with no statement of its own (the worker decides with the task's profile
-- chain, which only it knows: shared/runtime/src/worker/held.rs). With no hold anywhere, three
-- index probes that find nothing.
UPDATE tasks
SET status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, now()),
    heartbeat_at = now(), updated_at = now(), claim_token = :claim_token, batch_id = NULL,
    awaiting_batch = false
WHERE id IN (
    SELECT claimable.id
    FROM (SELECT i FROM generate_subscripts(:task_ids::uuid[], 1) AS i
          ORDER BY (:task_ids::uuid[])[i]) AS wanted
    CROSS JOIN LATERAL (
        SELECT id FROM tasks
        WHERE id = (:task_ids::uuid[])[wanted.i] AND status = (SELECT 'queued'::text)
          AND cancel_requested_at IS NULL AND attempts < max_attempts
          AND clock_timestamp() < :claim_by
        FOR UPDATE SKIP LOCKED) AS claimable)
RETURNING {{fragments/task_columns}}, unheld_at,
    (SELECT jsonb_agg(jsonb_build_object('id', hold.id, 'profile', hold.profile,
                                         'scopeId', hold.scope_id, 'automatic', hold.app_id IS NULL,
                                         'probe', COALESCE(hold.probe_task = tasks.id AND hold.probe_until >= now(), false),
                                         'probeFree', hold.app_id IS NULL
                                                      AND (hold.probe_until IS NULL OR hold.probe_until < now())))
     FROM (SELECT id, app_id, profile, scope_id, probe_task, probe_until FROM holds
           WHERE released_at IS NULL AND app_id = tasks.app_id AND profile IS NOT NULL
           UNION ALL
           SELECT id, app_id, profile, scope_id, probe_task, probe_until FROM holds
           WHERE released_at IS NULL AND app_id = tasks.app_id AND scope_id = tasks.scope_id
           UNION ALL
           SELECT id, app_id, profile, scope_id, probe_task, probe_until FROM holds
           WHERE released_at IS NULL AND app_id IS NULL) hold) AS active_holds,
    set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
