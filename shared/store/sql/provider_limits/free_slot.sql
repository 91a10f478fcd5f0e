-- Free a slot as soon as the call ends: only by its holder, so a free that comes
-- after the lease ran out (and another call took the slot) frees nothing.
UPDATE provider_slots SET held_until = '-infinity', holder = NULL
WHERE profile_id = :profile_id AND slot = :slot AND holder = :holder
