-- The application's lock, exclusive: near the cap, the count is exact (admission.rs).
SELECT pg_advisory_xact_lock(hashtextextended(:app_id, 7454))
