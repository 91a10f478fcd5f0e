-- Other batch rows of :profile whose submit outcome may still be unknown (submitting, a submit
-- sent and not refused) and whose first submit went out before :until: a batch at the provider
-- that matches what this row sent may be theirs, not yet recorded. Open rows only, so few.
SELECT count(*) FROM task_batches
WHERE profile = :profile AND id <> :batch_id AND state = 'submitting' AND submits > 0
  AND submit_sent_at <= :until::timestamptz
