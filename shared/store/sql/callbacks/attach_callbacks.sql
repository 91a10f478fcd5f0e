-- Callbacks named by creates, item i of every array being callback i, each attached to its task
-- (a new task, or the one its effect key already named). One whose task has ended already (a
-- result-cache hit, an existing task) is owed at once; the others wait for the transition, which
-- makes them owed by the outbox's trigger (migrations/V19). The tasks are read FOR SHARE, in id
-- order as every settlement locks them: a transition in flight finishes first and is seen here,
-- or waits for this insert and sees its callback. The same token twice on a task is one callback. Each
-- callback names its task's tenant (the heartbeat's fairness, the tenant's limit).
WITH given AS (
    SELECT * FROM unnest(:task_ids::uuid[], :kinds::text[], :tokens::text[]) AS g(task_id, kind, token)
),
task AS (
    SELECT id, app_id, status FROM tasks WHERE id IN (SELECT task_id FROM given) ORDER BY id FOR SHARE
)
INSERT INTO task_callbacks (task_id, app_id, kind, token, token_hash, state, due_at)
SELECT given.task_id, task.app_id, given.kind, given.token, sha256(convert_to(given.token, 'UTF8')),
    CASE WHEN task.status IN ('succeeded', 'failed', 'canceled') THEN 'owed' ELSE 'waiting' END,
    CASE WHEN task.status IN ('succeeded', 'failed', 'canceled') THEN now() END
FROM given JOIN task ON task.id = given.task_id
ON CONFLICT (task_id, token_hash) DO NOTHING
RETURNING task_id, state
