-- Take a free concurrency slot of a profile (one whose lease ran out) for :lease_ms. SKIP LOCKED:
-- concurrent takers each get another slot, or none, without waiting on each other. Slots above
-- :slots (a lowered limit) are never taken. No row back: every slot is busy.
WITH free AS (
    SELECT slot FROM provider_slots
    WHERE profile_id = :profile_id AND slot <= :slots::integer AND lease_until < now()
    ORDER BY slot LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE provider_slots AS slots
SET lease_until = now() + :lease_ms::bigint * interval '1 millisecond'
FROM free
WHERE slots.profile_id = :profile_id AND slots.slot = free.slot
RETURNING slots.slot
