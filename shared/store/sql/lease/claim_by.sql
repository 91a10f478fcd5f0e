-- Claim the next attempt of the tasks an SQS delivery names (one task or ten), in one statement:
-- only a queued task whose cancel was not requested and whose attempt budget is not spent. The
-- lease is (id, the new attempts). The rows are taken in id order, and SKIP LOCKED: a claim
-- never waits on a row lock (another worker claiming a duplicate, a create marking its message
-- sent), so it answers in time or not at all; a row it skipped is `busy` (claim_by_misses.sql) and
-- its record comes back a moment later.
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
UPDATE tasks
SET status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, now()),
    heartbeat_at = now(), updated_at = now(), claim_token = :claim_token, batch_id = NULL,
    awaiting_batch = false
WHERE id IN (
    SELECT id FROM tasks
    WHERE id = ANY(:task_ids::uuid[]) AND status = (SELECT 'queued'::text)
      AND cancel_requested_at IS NULL AND attempts < max_attempts
      AND clock_timestamp() < :claim_by
    ORDER BY id
    FOR UPDATE SKIP LOCKED)
RETURNING {{fragments/task_columns}},
    set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
