-- aitasks: no transaction
-- Fewer indexes on `tasks` (issue 51): every index is written by every insert and by every update
-- that is not HOT, and locked by every statement on the table (past 16 relations a transaction's
-- locks leave the lock manager's fast path). Three indexes go, one comes; V37 names what each
-- kept index is for.
--
-- The queue's two deadlines in one index: a plain queued task's is its creation plus the queue
-- timeout (`deferred_by IS NULL`, then `created_at`), a deferred one's its window (`deferred_by`).
-- sweep/expire_queued.sql walks both ranges, batch_form/send_due_now.sql and
-- batch_form/nearest_window.sql the second. It replaces tasks_queued_created_idx (created_at,
-- plain) and tasks_deferred_by_idx (deferred_by, deferred). Built before they are dropped, so
-- the statements always have one of them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_queued_deadline_idx ON tasks (deferred_by, created_at, id)
    WHERE status = 'queued';
DROP INDEX CONCURRENTLY IF EXISTS tasks_queued_created_idx;
DROP INDEX CONCURRENTLY IF EXISTS tasks_deferred_by_idx;
-- tasks_queued_at_idx (updated_at of queued tasks) served the lost-message look, which reads
-- tasks_unsent_at_idx now (its own predicate and order), and the backlog's oldest queued task,
-- counted from its creation now through tasks_queued_deadline_idx (stats/backlog.sql).
DROP INDEX CONCURRENTLY IF EXISTS tasks_queued_at_idx;
