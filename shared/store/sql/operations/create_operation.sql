-- A new operation, under the tenant's lock (create_operation_lock.sql); with an idempotency key,
-- the tenant's operation of that key when it has one already (`new` false: the caller compares
-- its body). Nothing comes back when the tenant has :running_max operations running already
-- and the key names none.
WITH existing AS (
    SELECT {{fragments/operation_columns}}
    FROM operations WHERE app_id = :app_id AND idempotency_key = :idempotency_key
),
running AS (
    SELECT count(*) AS n FROM operations WHERE app_id = :app_id AND state = 'running'
),
inserted AS (
    INSERT INTO operations (id, app_id, action, filter, recompute, idempotency_key)
    SELECT :id, :app_id, :action, :filter, :recompute, :idempotency_key
    WHERE NOT EXISTS (SELECT FROM existing) AND (SELECT n FROM running) < :running_max::bigint
    RETURNING {{fragments/operation_columns}}
)
SELECT inserted.*, true AS new FROM inserted
UNION ALL
SELECT existing.*, false AS new FROM existing
