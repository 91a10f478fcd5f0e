-- Take a free concurrency slot of a profile (one whose lease ran out) for :lease_ms, as :holder
-- for tenant :app_id. SKIP LOCKED: concurrent takers each get another slot, or none, without
-- waiting on each other. Slots above :slots (a lowered limit) are never taken. No row back:
-- every slot is busy, or the free slots are no more than the tenants waiting in line that were
-- served less recently than this one (`ahead`: the slots are left for them, so a tenant that
-- floods the profile cannot starve another; with a slot to spare, nobody waits). A slot taken
-- serves the tenant (`served`: it leaves the line). Both counts stop at :slots.
-- The lease's end is the column held_until (named in V17; renaming a column would break the
-- functions still running through a deploy).
WITH me AS (
    SELECT COALESCE((SELECT last_served FROM provider_line
                     WHERE profile_id = :profile_id AND app_id = :app_id), '-infinity') AS my_last_served
),
ahead AS (
    SELECT count(*) AS tenants FROM (
        SELECT 1 FROM provider_line, me
        WHERE profile_id = :profile_id AND app_id <> :app_id AND waiting_until > now()
          AND COALESCE(last_served, '-infinity') < my_last_served
        LIMIT :slots::integer
    ) waiting
),
open AS (
    SELECT count(*) AS slots FROM (
        SELECT 1 FROM provider_slots
        WHERE profile_id = :profile_id AND slot <= :slots::integer AND held_until < now()
        LIMIT :slots::integer
    ) unheld
),
free AS (
    SELECT slot FROM provider_slots
    WHERE profile_id = :profile_id AND slot <= :slots::integer AND held_until < now()
      AND (SELECT slots FROM open) > (SELECT tenants FROM ahead)
    ORDER BY slot LIMIT 1
    FOR UPDATE SKIP LOCKED
),
taken AS (
    UPDATE provider_slots AS slots
    SET held_until = now() + :lease_ms::bigint * interval '1 millisecond', holder = :holder
    FROM free
    WHERE slots.profile_id = :profile_id AND slots.slot = free.slot
    RETURNING slots.slot
),
served AS (
    INSERT INTO provider_line (profile_id, app_id, last_served, waiting_until)
    SELECT :profile_id, :app_id, now(), NULL FROM taken
    ON CONFLICT (profile_id, app_id) DO UPDATE SET last_served = now(), waiting_until = NULL
)
SELECT slot FROM taken
