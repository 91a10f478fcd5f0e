-- The system-wide lock, shared: admissions far from the optional system-wide cap (admission.rs).
-- Shared holders never wait on each other; only an admission near the cap takes it exclusive.
SELECT pg_advisory_xact_lock_shared(7455)
