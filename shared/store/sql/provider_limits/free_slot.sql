-- Give a slot back as soon as the call ends.
UPDATE provider_slots SET lease_until = '-infinity' WHERE profile_id = :profile_id AND slot = :slot
