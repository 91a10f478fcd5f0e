-- A new run; with an idempotency key, the tenant's run of that key when it has one already
-- (`new` false: the caller compares its body). `ON CONFLICT` waits for a create of the same key
-- in flight; if that one committed after this statement began, neither half sees its row and no
-- row comes back: the caller runs the statement again, and the next snapshot sees it.
WITH inserted AS (
    INSERT INTO runs (id, app_id, scope_id, actor, idempotency_key)
    VALUES (:id, :app_id, :scope_id, :actor, :idempotency_key)
    ON CONFLICT (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id, app_id, scope_id, state, actor, cancel_requested_at, created_at, updated_at, true AS new
)
SELECT * FROM inserted
UNION ALL
SELECT id, app_id, scope_id, state, actor, cancel_requested_at, created_at, updated_at, false AS new
FROM runs
WHERE app_id = :app_id AND idempotency_key = :idempotency_key AND NOT EXISTS (SELECT FROM inserted)
