-- Runs whose cancel has not reached every task yet, oldest first (runs_cancel_pending_idx).
SELECT id FROM runs WHERE tasks_cancel_pending ORDER BY updated_at, id LIMIT :page
