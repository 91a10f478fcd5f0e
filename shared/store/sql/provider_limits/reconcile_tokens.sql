-- A finished call's real token count in place of what start_call.sql reserved for it, in the
-- minute it was counted in (:used NULL: the call failed without saying; the reservation stays).
UPDATE provider_usage SET tokens = GREATEST(tokens - :reserved::bigint + COALESCE(:used::bigint, :reserved::bigint), 0)
WHERE profile_id = :profile_id AND minute = :minute
