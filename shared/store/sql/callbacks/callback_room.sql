-- Before a create that brings callbacks is stored: what its callbacks would add to the limits
-- (docs/api.md, "Callbacks"). For each given (effect key, token), item i of both arrays: the live
-- callbacks (waiting or owed) of the tenant's task with that key, if it exists, and whether the
-- token is on that task already (attaching it again adds nothing), and whether that task has
-- ended (its callback is owed at once, answered, never heartbeated: no waiting one). And the tenant's waiting
-- callbacks, counted only up to :tenant_limit: one bounded range of task_callbacks_waiting_idx,
-- however many there are.
WITH given AS (
    SELECT * FROM unnest(:effect_keys::text[], :tokens::text[]) WITH ORDINALITY AS g(effect_key, token, item)
)
SELECT given.item,
    COALESCE(live.callbacks, 0) AS task_callbacks,
    COALESCE(live.has_token, false) AS attached,
    COALESCE(tasks.status IN ('succeeded', 'failed', 'canceled'), false) AS task_ended,
    (SELECT count(*) FROM (SELECT 1 FROM task_callbacks
                           WHERE app_id = :app_id AND state = 'waiting'
                           LIMIT :tenant_limit) counted) AS tenant_waiting
FROM given
LEFT JOIN tasks ON tasks.app_id = :app_id AND tasks.effect_key = given.effect_key
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE c.state IN ('waiting', 'owed')) AS callbacks,
        bool_or(c.token_hash = sha256(convert_to(given.token, 'UTF8'))) AS has_token
    FROM task_callbacks c WHERE c.task_id = tasks.id
) live ON true
ORDER BY given.item
