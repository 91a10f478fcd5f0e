-- Count one call against a profile's per-minute limits, if they allow it: the minute's row is
-- created or raised only while requests < :requests_per_minute and tokens < :tokens_per_minute
-- (NULL: no such limit). No row back: the limit is reached for this minute. One statement,
-- one row lock held for its own duration: the profile's calls serialize only on this update.
INSERT INTO provider_usage AS usage (profile_id, minute, requests, tokens)
VALUES (:profile_id, :minute, 1, 0)
ON CONFLICT (profile_id, minute) DO UPDATE SET requests = usage.requests + 1
WHERE (:requests_per_minute::integer IS NULL OR usage.requests < :requests_per_minute::integer)
  AND (:tokens_per_minute::bigint IS NULL OR usage.tokens < :tokens_per_minute::bigint)
RETURNING usage.requests
