-- One page of an operation's walk over every task of the tenant, in creation order along
-- tasks_app_created_idx (app_id, created_at; migrations/V28), created before the operation was:
-- the tasks created after the cursor's instant, up to the instant of the :page-th of them, that
-- instant's ties included. The index has no id to order ties by, so a page ends between two
-- instants, never inside one: `edge` reads at most :page index entries in the index's own order
-- (no sort, on any plan), and the page then reads those tasks and the rest of its last instant's.
-- The tasks of one instant are one transaction's (a bulk create's share its `now()`), so a page
-- holds at most :page tasks plus the rest of one bulk create (1,000). The cursor is the last
-- instant looked at: every task created at it has been looked at.
WITH edge AS (
    SELECT created_at FROM tasks
    WHERE app_id = :app_id AND created_at > :cursor_at::timestamptz
      AND created_at < :operation_created_at::timestamptz
    ORDER BY app_id, created_at
    LIMIT :page
)
SELECT id, created_at,
    {{fragments/operation_match}}
FROM tasks
WHERE app_id = :app_id AND created_at > :cursor_at::timestamptz
  AND created_at <= (SELECT max(created_at) FROM edge)
ORDER BY created_at, id
