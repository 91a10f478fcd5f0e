-- The application's lock, shared: admissions far from the application-wide cap (admission.rs).
SELECT pg_advisory_xact_lock_shared(hashtextextended(:app_id, 7454))
