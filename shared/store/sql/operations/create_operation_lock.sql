-- The tenant's operation creates, one at a time (a transaction-scoped advisory lock on the
-- tenant: only its own creates wait), so that two creates cannot both pass the limit on running
-- operations, nor both miss the other's idempotency key.
SELECT pg_advisory_xact_lock(hashtextextended('aitasks.operations:' || :app_id::text, 0))
