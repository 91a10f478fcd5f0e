-- The provider's batches made for this row beyond the one adopted: canceled there, and deleted
-- with the batch once it has ended (take_batch_leftovers.sql).
UPDATE task_batches
SET extra_batch_ids = ARRAY(SELECT DISTINCT unnest(extra_batch_ids || :extras::text[]))
WHERE id = :batch_id
