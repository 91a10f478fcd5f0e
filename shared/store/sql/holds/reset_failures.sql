-- The provider answered a call at :profile: its count of failures in a row starts again.
UPDATE profile_failures SET failures = 0, last_task = NULL, updated_at = now()
WHERE profile = :profile AND failures > 0
