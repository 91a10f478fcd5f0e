-- The provider said the job of a batch changed state (Bedrock's job-state event): that open
-- batch is due now, so the sweep the event started reads its results instead of waiting for its
-- next poll. Only a submitted batch waiting for a poll (due within :poll_ms): one a batcher
-- holds right now (due at the end of its lease, minutes away) is left to it
-- (task_batches_provider_idx).
UPDATE task_batches SET due_at = now()
WHERE provider_batch_id = :provider_batch_id AND state = 'submitted'
  AND due_at > now() AND due_at <= now() + :poll_ms::bigint * interval '1 millisecond'
