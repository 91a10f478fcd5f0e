-- complete_attempt.sql for the attempts of one invocation that finished together: one statement
-- completes them all (the trigger on `tasks` writes each one's completion event, migrations/V38).
-- Item i of each array is attempt i. Fenced item by item exactly as the single statement is: an
-- attempt whose lease is gone (its provider batch too: a late result of a batch the task has
-- left), or whose cancel was requested, is left alone and returns no event. A scoped task is
-- left alone too (it completes by itself, `Lease::completes_alone`): its ending updates its
-- shard's count row, and a group would lock several such rows in no set order.
--
-- `tasks.id = ANY(:task_ids)` repeats what the join says, for the planner: without it the
-- generic plan found the rows through the in-flight index and filtered every queued and running
-- task (and every dead index entry left since the last vacuum), a cost that grew with the
-- backlog (docs/benchmarks/2026-12-03-issue-37-shipped-path-at-the-floor.md); with it the primary key finds exactly the given rows.
--
-- The rows are locked in id order first (`locked`), as every statement that locks several tasks
-- locks them: two such statements over the same tasks then wait for each other instead of
-- deadlocking (tests/store/lock_order.rs).
WITH given AS (
    SELECT * FROM unnest(:task_ids::uuid[], :attempts::int[], :outputs::jsonb[], :usages::jsonb[],
        :batch_ids::uuid[]) AS given(task_id, attempt, new_output, new_usage, given_batch_id)
),
locked AS (
    SELECT id AS locked_id FROM tasks WHERE id = ANY(:task_ids::uuid[]) ORDER BY id FOR UPDATE
)
UPDATE tasks
SET status = 'succeeded', output = given.new_output, usage = given.new_usage, error_code = NULL,
    error_message = NULL, completed_at = now(), updated_at = now()
FROM given JOIN locked ON locked_id = given.task_id
WHERE tasks.id = ANY(:task_ids::uuid[]) AND tasks.id = given.task_id
  AND tasks.status = 'running' AND tasks.attempts = given.attempt
  AND tasks.batch_id IS NOT DISTINCT FROM given.given_batch_id
  AND tasks.cancel_requested_at IS NULL AND tasks.cache_key IS NULL
RETURNING id, {{fragments/ended_event}}
