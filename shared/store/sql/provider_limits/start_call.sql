-- Count one call against a profile's per-minute limits, before it starts, if they allow it: the
-- minute's row is created or raised by one request and the call's reserved tokens (:reserve,
-- its input estimate and output cap) only while requests < :requests_per_minute and the tokens
-- with the reservation stay within :tokens_per_minute (NULL: no such limit; a call whose
-- reservation alone is over the limit goes first in an empty minute, or never would). So N
-- calls starting together never overshoot: each holds its tokens before it runs, and
-- settle_tokens.sql puts the real count in their place after.
--
-- With :check_line (the attempt's first call, when no slot was taken for it), a tenant waiting
-- in line that was served less recently goes first (take_slot.sql has the rule): no row back.
-- No row back also means the limit is reached for this minute. One statement, one row lock held
-- for its own duration: the profile's calls serialize only on this update.
WITH me AS (
    SELECT COALESCE((SELECT last_served FROM provider_line
                     WHERE profile_id = :profile_id AND app_id = :app_id), '-infinity') AS my_last_served
),
ahead AS (
    SELECT 1 FROM provider_line, me
    WHERE :check_line AND profile_id = :profile_id AND app_id <> :app_id AND waiting_until > now()
      AND COALESCE(last_served, '-infinity') < my_last_served
    LIMIT 1
),
counted AS (
    INSERT INTO provider_usage AS usage (profile_id, minute, requests, tokens)
    SELECT :profile_id, :minute, 1, :reserve::bigint WHERE NOT EXISTS (SELECT 1 FROM ahead)
    ON CONFLICT (profile_id, minute) DO UPDATE
    SET requests = usage.requests + 1, tokens = usage.tokens + :reserve::bigint
    WHERE (:requests_per_minute::integer IS NULL OR usage.requests < :requests_per_minute::integer)
      AND (:tokens_per_minute::bigint IS NULL OR usage.tokens = 0
           OR usage.tokens + :reserve::bigint <= :tokens_per_minute::bigint)
    RETURNING usage.requests
),
served AS (
    INSERT INTO provider_line (profile_id, app_id, last_served, waiting_until)
    SELECT :profile_id, :app_id, now(), NULL FROM counted WHERE :check_line
    ON CONFLICT (profile_id, app_id) DO UPDATE SET last_served = now(), waiting_until = NULL
)
SELECT requests FROM counted
