-- The tokens a finished call used, counted in the minute it started in.
UPDATE provider_usage SET tokens = tokens + :tokens
WHERE profile_id = :profile_id AND minute = :minute
