-- Admission bookkeeping, part one: a scoped task that ended failed or canceled frees its logical
-- step (a failure does not use up a source's budget; a success keeps its step, so a statement
-- that only ends tasks `succeeded` leaves this part out). Reads the tasks that changed from the
-- statement's `settled` (id, status). The one home of this part: the loader writes it out in
-- every statement that names it (src/statement.rs).
freed AS (
    UPDATE scope_admissions SET logical_key = NULL
    WHERE task_id IN (SELECT id FROM settled WHERE status IN ('failed', 'canceled'))
)
