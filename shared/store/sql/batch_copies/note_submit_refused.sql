-- A submit the provider answered with a refusal (a 4xx, 429, or 503/529 overloaded) made no
-- batch: counted back, so a later lookup expects no more batches than the submits whose outcome
-- is unknown (a timeout, a lost connection, a 5xx) and never takes another's for this row's.
UPDATE task_batches SET submits = GREATEST(submits - 1, 0)
WHERE id = :batch_id AND state = 'submitting'
