-- Spend :units of the tenant's read budget, a token bucket of :burst units refilled at :rate a
-- second (migrations/V31), in one upsert of its row: the bucket is refilled for the time since its
-- last read (a later `now()` only: a statement that started earlier adds nothing), then the units
-- are taken if it holds them. `spent` says whether it did; `tokens` is what is left, or, refused,
-- what it held. A tenant's first read finds a full bucket. Only this tenant's reads wait on the
-- row, each for one short statement.
INSERT INTO read_budgets AS b (app_id, tokens, refilled_at, spent)
VALUES (:app_id, :burst::float8 - :units::float8, now(), true)
ON CONFLICT (app_id) DO UPDATE SET
    spent = LEAST(:burst::float8,
                  b.tokens + :rate::float8 * GREATEST(0, extract(epoch FROM now() - b.refilled_at)::float8))
            >= :units::float8,
    tokens = LEAST(:burst::float8,
                   b.tokens + :rate::float8 * GREATEST(0, extract(epoch FROM now() - b.refilled_at)::float8))
             - CASE WHEN LEAST(:burst::float8,
                               b.tokens + :rate::float8
                                   * GREATEST(0, extract(epoch FROM now() - b.refilled_at)::float8))
                         >= :units::float8
                    THEN :units::float8 ELSE 0 END,
    refilled_at = GREATEST(b.refilled_at, now())
RETURNING spent, tokens
