-- Open a batch for tasks the batcher holds locked (form_batch_lock.sql), recorded before the provider
-- is asked: the batch row and the claim of its tasks commit together, so a batcher killed after
-- this commit finds the batch `submitting` and submits it (idempotently) on its next look.
--
-- Each task's next attempt is counted and leased as a worker's claim would (status running,
-- attempts + 1), with `batch_id` naming the batch. Its lease (`batch_lease_until`, a batch task's
-- own: it has no worker's heartbeat) ends half the slack past the time the batcher gives the
-- batch up for it (its window's end less :slack_ms; the batcher looks at a batch by then,
-- batches/look_at_batch_later.sql): the stale-running sweep leaves it alone while the batcher may
-- still give it back uncounted, and takes it back only if the batcher never does.
WITH batch AS (
    INSERT INTO task_batches (id, profile, provider, records, give_up_at)
    SELECT :batch_id, :profile, :provider, count(*),
        min(deferred_by) - :slack_ms::bigint * interval '1 millisecond'
    FROM tasks WHERE id = ANY(:task_ids::uuid[])
    RETURNING id
),
claimed AS (
    UPDATE tasks
    SET status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, now()),
        heartbeat_at = NULL,
        batch_lease_until = GREATEST(now(), deferred_by - :slack_ms::bigint * interval '1 millisecond')
            + :slack_ms::bigint / 2 * interval '1 millisecond',
        updated_at = now(), awaiting_batch = false, claim_token = NULL,
        batch_id = (SELECT id FROM batch)
    WHERE id = ANY(:task_ids::uuid[]) AND status = 'queued' AND awaiting_batch
      AND cancel_requested_at IS NULL AND attempts < max_attempts
    RETURNING id, app_id
),
tenants AS (
    -- The batch's requests by tenant (migrations/V32): each tenant reads its own count only.
    INSERT INTO task_batch_tenants (batch_id, app_id, requests)
    SELECT (SELECT id FROM batch), app_id, count(*) FROM claimed GROUP BY app_id
)
SELECT id FROM claimed
