-- Serializes admissions per (app, scope), never globally. A hash collision only serializes two
-- unrelated scopes.
SELECT pg_advisory_xact_lock(hashtextextended(:app_id || chr(31) || :scope_id, 7453))
