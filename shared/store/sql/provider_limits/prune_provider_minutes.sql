-- Per-minute counts older than an hour say nothing any more: the sweeper deletes them, bounded.
DELETE FROM provider_usage WHERE ctid IN (
    SELECT ctid FROM provider_usage WHERE minute < now() - interval '1 hour' LIMIT :page
)
