-- The tasks an operation's page replays (or the one a replay request names), whole, with the
-- scope terms their creates gave (migrations/V33): the create of each replay is built from them.
-- Only the tenant's own; at most a page of ids.
SELECT {{fragments/task_columns}}, scope_terms
FROM tasks
WHERE id = ANY(:task_ids::uuid[]) AND app_id = :app_id
ORDER BY id
