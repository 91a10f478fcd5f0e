-- The provider batch a task was sent in (tasks.batch_id), with this application's own share of it:
-- its requests in the batch (task_batch_tenants, migrations/V32) and its tasks still waiting in it
-- (tasks_in_batch_idx, migrations/V20), never another tenant's (a provider batch can hold several
-- tenants' tasks). NULL batch columns for a task of this application in no batch (never deferred,
-- still awaiting one, or its batch pruned a day after it ended); no row for a missing task or
-- another application's.
SELECT t.id AS task_id, b.id AS batch_id, b.provider, b.provider_batch_id, b.state, b.outcome,
    (SELECT n.requests FROM task_batch_tenants n WHERE n.batch_id = b.id AND n.app_id = :app_id)
        AS requests,
    b.created_at, b.submitted_at, b.ended_at,
    (SELECT count(*) FROM tasks w WHERE w.batch_id = b.id AND w.app_id = :app_id AND w.status = 'running')
        AS pending
FROM tasks t
LEFT JOIN task_batches b ON b.id = t.batch_id
WHERE t.id = :task_id AND t.app_id = :app_id
