-- Heartbeat capacity at volume (docs/lifecycle.md, "Callbacks"): a callback names its tenant, so
-- the heartbeat duty can share each page between tenants (one tenant's callbacks never starve
-- another's) and a create can count a tenant's waiting callbacks against its limit
-- (AITASK_TENANT_WAITING_CALLBACKS) with one bounded range of an index, no scan and no counter row
-- to contend on.
ALTER TABLE task_callbacks ADD COLUMN app_id text;
UPDATE task_callbacks SET app_id = tasks.app_id FROM tasks WHERE tasks.id = task_callbacks.task_id;

-- A callback's tenant is its task's: a row inserted without it (the create-task and intake-task
-- of the release before this one, still running while a deploy rolls out or after a rollback)
-- gets it here, before the NOT NULL below is checked, so an older create never fails on it.
CREATE FUNCTION task_callbacks_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.app_id IS NULL THEN
        SELECT app_id INTO NEW.app_id FROM tasks WHERE id = NEW.task_id;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER task_callbacks_tenant BEFORE INSERT ON task_callbacks
    FOR EACH ROW EXECUTE FUNCTION task_callbacks_tenant();
ALTER TABLE task_callbacks ALTER COLUMN app_id SET NOT NULL;

-- The heartbeat duty walks the tenants with waiting callbacks (one probe each) and takes each
-- one's least recently heartbeated; the limit counts a tenant's waiting callbacks. One index
-- serves both, replacing the one ordered by heartbeat alone.
DROP INDEX task_callbacks_waiting_idx;
CREATE INDEX task_callbacks_waiting_idx ON task_callbacks (app_id, heartbeat_at, id) WHERE state = 'waiting';
