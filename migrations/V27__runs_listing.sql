-- GET /v1/runs (docs/api.md, "History"): a tenant's runs in id order (UUIDv7: creation order),
-- in keyset pages. Without it the listing would read every tenant's runs.
CREATE INDEX IF NOT EXISTS runs_app_list_idx ON runs (app_id, id);
