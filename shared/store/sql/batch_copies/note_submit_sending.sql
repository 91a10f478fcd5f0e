-- A submit is about to be sent: counted first, so a look after one whose answer was lost knows
-- the provider may have a batch made since `submit_sent_at` (the first submit's time).
UPDATE task_batches
SET submits = submits + 1, submit_sent_at = COALESCE(submit_sent_at, now())
WHERE id = :batch_id AND state = 'submitting'
