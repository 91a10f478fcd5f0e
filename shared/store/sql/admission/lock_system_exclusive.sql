-- The system-wide lock, exclusive: near the system-wide cap, the count is exact (admission.rs).
SELECT pg_advisory_xact_lock(7455)
