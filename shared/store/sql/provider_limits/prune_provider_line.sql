-- Tenants neither waiting nor served for an hour leave the line, a bounded page at a time.
DELETE FROM provider_line WHERE (profile_id, app_id) IN (
    SELECT profile_id, app_id FROM provider_line
    WHERE COALESCE(waiting_until, '-infinity') < now() - interval '1 hour'
      AND COALESCE(last_served, '-infinity') < now() - interval '1 hour'
    LIMIT :page
)
