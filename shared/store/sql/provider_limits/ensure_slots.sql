-- The concurrency slots of a profile exist (1 to :slots); a raised limit adds the missing ones.
INSERT INTO provider_slots (profile_id, slot, held_until)
SELECT :profile_id, slot, '-infinity' FROM generate_series(1, :slots::integer) AS slot
ON CONFLICT (profile_id, slot) DO NOTHING
