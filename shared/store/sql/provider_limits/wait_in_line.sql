-- A tenant refused at a limit waits in line for the profile until :wait_ms from now (the wait
-- its task was given, and a little more): meanwhile tenants served more recently leave it the
-- next slot or call.
INSERT INTO provider_line (profile_id, app_id, last_served, waiting_until)
VALUES (:profile_id, :app_id, NULL, now() + :wait_ms::bigint * interval '1 millisecond')
ON CONFLICT (profile_id, app_id) DO UPDATE
SET waiting_until = GREATEST(provider_line.waiting_until, EXCLUDED.waiting_until)
