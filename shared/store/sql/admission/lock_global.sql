-- One lock for every admission, as the reference implementation does: only the admission
-- benchmark's baseline uses it.
SELECT pg_advisory_xact_lock(7453)
