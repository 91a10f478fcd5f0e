-- Why claim.sql claimed these tasks were not claimed (duplicate deliveries, a
-- requested cancel, deleted tasks: a missing id has no row).
SELECT id, status, cancel_requested_at IS NOT NULL AS cancel_requested FROM tasks
WHERE id = ANY(:task_ids::uuid[])
