-- A provider batch's requests counted by tenant: GET /v1/tasks/{taskId}/batch answers the
-- caller's own count, since one batch can carry several tenants' tasks and another tenant's volume
-- is none of the caller's business (docs/api.md, "History"). Written with the batch, in the
-- statement that claims its tasks (batch_form/form_batch_open.sql); gone with it when it is pruned
-- a day after it ends.
CREATE TABLE IF NOT EXISTS task_batch_tenants (
    batch_id uuid NOT NULL REFERENCES task_batches (id) ON DELETE CASCADE,
    app_id   text NOT NULL,
    requests integer NOT NULL CHECK (requests > 0),
    PRIMARY KEY (batch_id, app_id)
);

-- The batches kept now (open, or ended less than a day ago) are counted from their tasks. Those
-- tasks were created at most a day (the longest deferred window) before their batch, so only
-- that stretch of the primary key is read (task ids are UUIDv7: creation time first), never the
-- whole table; the bound is a literal so that the planner sees how recent it is.
DO $$
DECLARE
    oldest timestamptz;
    floor_id uuid;
BEGIN
    -- The oldest batch kept (open, or ended within the day), but never more than a week back: a
    -- batch the prune keeps longer (a provider clean-up that keeps failing, a submit stuck for
    -- weeks) would otherwise make this read months of tasks in the deploy's transaction. Such a
    -- batch gets no row: it answers the one task asked about (store/src/history.rs).
    SELECT GREATEST(min(created_at), now() - interval '7 days') - interval '1 day' INTO oldest
    FROM task_batches WHERE ended_at IS NULL OR ended_at > now() - interval '1 day';
    IF oldest IS NULL THEN
        RETURN;
    END IF;
    floor_id := (lpad(to_hex((extract(epoch FROM oldest) * 1000)::bigint), 12, '0')
                 || repeat('0', 20))::uuid;
    EXECUTE format(
        'INSERT INTO task_batch_tenants (batch_id, app_id, requests)
         SELECT batch_id, app_id, count(*) FROM tasks
         WHERE id >= %L::uuid
           AND batch_id IN (SELECT id FROM task_batches WHERE created_at >= %L::timestamptz + interval ''1 day'')
         GROUP BY batch_id, app_id
         ON CONFLICT DO NOTHING', floor_id, oldest);
END
$$;
