-- Heartbeat capacity at volume (docs/lifecycle.md, "Callbacks"): a callback names its tenant, so
-- the heartbeat duty can share each page between tenants (one tenant's callbacks never starve
-- another's) and a create can count a tenant's waiting callbacks against its limit
-- (AITASK_TENANT_WAITING_CALLBACKS) with one bounded range of an index, no scan and no counter row
-- to contend on.
ALTER TABLE task_callbacks ADD COLUMN app_id text;
UPDATE task_callbacks SET app_id = tasks.app_id FROM tasks WHERE tasks.id = task_callbacks.task_id;
ALTER TABLE task_callbacks ALTER COLUMN app_id SET NOT NULL;

-- The heartbeat duty walks the tenants with waiting callbacks (one probe each) and takes each
-- one's least recently heartbeated; the limit counts a tenant's waiting callbacks. One index
-- serves both, replacing the one ordered by heartbeat alone.
DROP INDEX task_callbacks_waiting_idx;
CREATE INDEX task_callbacks_waiting_idx ON task_callbacks (app_id, heartbeat_at, id) WHERE state = 'waiting';
