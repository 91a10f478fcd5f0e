-- Running tasks whose holder is gone, oldest first, for the sweeper to decide what each ending
-- writes (the worker's own rule: settle::decision in aitasks-runtime) and expire_running.sql to
-- write it: an on-demand attempt whose worker's heartbeat is older than :stale_after_ms, or an
-- attempt in a provider batch whose lease (`batch_lease_until`) has passed (the batcher never gave
-- it back). A plain bounded read: the write checks all of it again, so two sweepers reading the
-- same page write each ending once.
SELECT id, app_id, attempts, max_attempts, batch_id, cache_key IS NOT NULL AS scoped,
    cancel_requested_at IS NOT NULL AS cancel_requested
FROM tasks
WHERE status = 'running'
  AND ((batch_id IS NULL AND heartbeat_at < now() - :stale_after_ms::bigint * interval '1 millisecond')
       OR (batch_id IS NOT NULL AND batch_lease_until < now()))
ORDER BY COALESCE(batch_lease_until, heartbeat_at), id
LIMIT :page
