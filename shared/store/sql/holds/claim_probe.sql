-- A claimed task that can run on a fallback takes the free probe lease of an automatic hold of a
-- profile in its chain (its claim read the lease as free: lease/claim_by.sql), and its attempt
-- calls the held profile first: a held profile whose tasks all run on their fallbacks, so that
-- none is ever parked to probe it (holds/park.sql, holds/take_probe.sql), is probed all the same.
-- Only while the lease is free: one probe at a time. The lease lasts two intervals, as a parked
-- probe's does; a probe that failed leaves it to lapse, and the next such task takes it then.
UPDATE holds
SET probe_task = :task_id, probe_until = now() + 2 * :probe_ms::bigint * interval '1 millisecond'
WHERE id = :hold_id AND released_at IS NULL AND app_id IS NULL
  AND (probe_until IS NULL OR probe_until < now())
RETURNING id
