-- Count one call against a profile's per-minute limits, before it starts, if they allow it: the
-- minute's row is created or raised by one request and the call's reserved tokens (:reserve,
-- its input estimate and output cap) only while requests < :requests_per_minute and the tokens
-- with the reservation stay within :tokens_per_minute (NULL: no such limit; a call whose
-- reservation alone is over the limit goes first in an empty minute, or never would). So N
-- calls starting together never overshoot: each holds its tokens before it runs, and
-- reconcile_tokens.sql puts the real count in their place after.
--
-- With :check_line (the attempt's first call, when no slot was taken for it), tenants waiting
-- in line that were served less recently go first (take_slot.sql has the rule), but only for
-- the room they need: the call is held back when what is left of the minute would not also
-- leave one call like it to each of them (`held_back`). With room for all, nobody waits.
-- The row back: `requests` when counted (NULL otherwise), and whether the line held it back.
-- One statement, one row lock held for its own duration: the profile's calls serialize only on
-- this update. The line is read with a bound (:requests_per_minute tenants at most matter).
WITH me AS (
    SELECT COALESCE((SELECT last_served FROM provider_line
                     WHERE profile_id = :profile_id AND app_id = :app_id), '-infinity') AS my_last_served
),
ahead AS (
    SELECT count(*) AS tenants FROM (
        SELECT 1 FROM provider_line, me
        WHERE :check_line AND profile_id = :profile_id AND app_id <> :app_id AND waiting_until > now()
          AND COALESCE(last_served, '-infinity') < my_last_served
        LIMIT 1000
    ) waiting
),
used AS (
    SELECT COALESCE(sum(requests), 0) AS requests, COALESCE(sum(tokens), 0) AS tokens
    FROM provider_usage WHERE profile_id = :profile_id AND minute = :minute
),
held_back AS (
    SELECT 1 FROM ahead, used
    WHERE ahead.tenants > 0
      AND ((:requests_per_minute::integer IS NOT NULL
            AND :requests_per_minute::integer - used.requests <= ahead.tenants)
        OR (:tokens_per_minute::bigint IS NOT NULL
            AND :tokens_per_minute::bigint - used.tokens < (ahead.tenants + 1) * :reserve::bigint))
),
counted AS (
    INSERT INTO provider_usage AS usage (profile_id, minute, requests, tokens)
    SELECT :profile_id, :minute, 1, :reserve::bigint WHERE NOT EXISTS (SELECT 1 FROM held_back)
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
SELECT (SELECT requests FROM counted) AS requests, EXISTS (SELECT 1 FROM held_back) AS held_back
