-- Count one new task against the tenant's quota for the UTC day: today's row is raised only while
-- under :limit. No row back: the quota is spent. Holds the tenant's row until the create commits
-- (or rolls back, spending nothing).
INSERT INTO tenant_usage AS usage (app_id, day, tasks)
VALUES (:app_id, (now() AT TIME ZONE 'UTC')::date, 1)
ON CONFLICT (app_id, day) DO UPDATE SET tasks = usage.tasks + 1 WHERE usage.tasks < :limit::bigint
RETURNING tasks
