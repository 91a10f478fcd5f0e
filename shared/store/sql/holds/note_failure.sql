-- An attempt's call at :profile failed on the provider's side: counted, unless the last one
-- counted was this same task's (attempts of different tasks in a row). At :after_failures the
-- profile is held for every tenant (an automatic hold; the unique index keeps one). Answers the
-- count, the hold placed now if any, and the profile's active automatic hold (placed now or
-- before). The row is the profile's one counter: failing calls of one profile wait on it for
-- this statement only, and only failing calls touch it.
WITH counted AS (
    INSERT INTO profile_failures AS f (profile, failures, last_task, updated_at)
    VALUES (:profile, 1, :task_id, now())
    ON CONFLICT (profile) DO UPDATE
    SET failures = CASE WHEN f.last_task IS DISTINCT FROM EXCLUDED.last_task THEN f.failures + 1
                   ELSE f.failures END,
        last_task = EXCLUDED.last_task, updated_at = now()
    RETURNING failures
),
placed AS (
    INSERT INTO holds (id, app_id, profile, reason)
    SELECT :hold_id, NULL, :profile, :reason FROM counted WHERE failures >= :after_failures::integer
    ON CONFLICT DO NOTHING
    RETURNING id
)
SELECT (SELECT failures FROM counted) AS failures, (SELECT id FROM placed) AS placed,
       COALESCE((SELECT id FROM placed),
                (SELECT id FROM holds WHERE released_at IS NULL AND app_id IS NULL AND profile = :profile))
           AS held
