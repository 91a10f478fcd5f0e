-- Each tenant's read budget (docs/api.md, "Read rate"): a token bucket of AITASK_READ_BURST units
-- refilled at AITASK_READ_RATE a second, spent by the reads that cost most (a page of tasks or
-- runs, the summary) with one upsert of the tenant's row (sql/read_rate/spend_reads.sql), so that
-- it holds across every instance of the API. Only that tenant's reads wait on its row: no read
-- waits on another tenant's. One small row per tenant that has read.
CREATE TABLE IF NOT EXISTS read_budgets (
    app_id      text PRIMARY KEY,
    -- What is left, as of `refilled_at`.
    tokens      double precision NOT NULL,
    refilled_at timestamptz NOT NULL,
    -- Whether the last read asked for had its units.
    spent       boolean NOT NULL
);
