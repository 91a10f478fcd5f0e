-- complete_attempt.sql for the attempts of one invocation that finished together: one statement
-- completes them all (the trigger on `tasks` writes each one's completion event, migrations/V38).
-- Item i of each array is attempt i. Fenced item by item exactly as the single statement is: an
-- attempt whose lease is gone (its provider batch too: a late result of a batch the task has
-- left), or whose cancel was requested, is left alone and returns no event. A scoped task is
-- left alone too (it completes by itself, `Lease::completes_alone`): its ending updates its
-- shard's count row, and a group would lock several such rows in no set order.
--
-- The given tasks are looked up one at a time, each through an index that leads with `id`
-- (`fenced`: the items in id order, and a LATERAL lookup of that one row with its fence), and
-- locked as they are found: in id order, as every statement that locks several tasks locks them,
-- so two such statements over the same tasks wait for each other instead of deadlocking
-- (tests/store/lock_order.rs). The update then names only those rows: no condition of its own
-- that could lead the planner to the in-flight index read whole, which an `id = ANY` join did
-- on a young table or a big backlog (docs/architecture.md, "A list of ids is looked up one id
-- at a time"; tests/store/young_tables.rs). A row takes the output and usage of the item whose
-- lease it still runs (`given`): a task given twice (a stale attempt beside the fresh one) is
-- completed by the fresh one's, and the attempt comes back so the caller answers that item. That
-- walk of the items for each row is quadratic in the group, which is an invocation's successes
-- or a page of a provider batch's results (`PAGE_LINES`, 500): 250,000 steps at the most. Its
-- events are handed over to the caller's publish when :hand_over says so (process-task:
-- fragments/hand_over).
UPDATE tasks
SET status = 'succeeded', (output, usage) = (
        SELECT (:outputs::jsonb[])[given.i], (:usages::jsonb[])[given.i]
        FROM generate_subscripts(:task_ids::uuid[], 1) AS given(i)
        WHERE (:task_ids::uuid[])[given.i] = tasks.id AND (:attempts::int[])[given.i] = tasks.attempts
          AND (:batch_ids::uuid[])[given.i] IS NOT DISTINCT FROM tasks.batch_id
        LIMIT 1),
    error_code = NULL, error_message = NULL, completed_at = now(), updated_at = now()
WHERE tasks.id IN (
    SELECT fenced.id
    FROM (SELECT i FROM generate_subscripts(:task_ids::uuid[], 1) AS i
          ORDER BY (:task_ids::uuid[])[i]) AS item
    CROSS JOIN LATERAL (
        SELECT id FROM tasks
        WHERE id = (:task_ids::uuid[])[item.i]
          AND status = 'running' AND attempts = (:attempts::int[])[item.i]
          AND batch_id IS NOT DISTINCT FROM (:batch_ids::uuid[])[item.i]
          AND cancel_requested_at IS NULL AND cache_key IS NULL
        FOR UPDATE) AS fenced)
    AND {{fragments/hand_over}}
RETURNING id, attempts AS settled_attempt, {{fragments/ended_event}}, {{fragments/owes_callbacks}}
