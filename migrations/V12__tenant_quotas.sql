-- New tasks per tenant per UTC day, for the optional server-side quotas (AITASK_TENANT_QUOTAS).
-- A create raises its tenant's row for today only while under the quota, in its own
-- transaction: a refused or rolled-back create spends nothing. Rows of past days are kept
-- small (one per tenant per day) and pruned by the sweeper after a week.
CREATE TABLE tenant_usage (
    app_id text NOT NULL,
    day date NOT NULL,
    tasks bigint NOT NULL,
    PRIMARY KEY (app_id, day)
);
CREATE INDEX tenant_usage_day_idx ON tenant_usage (day);
