-- Which of the provider's batch ids :ids are already ours (a batch row's, or an extra of one):
-- a lookup after a lost submit passes them by. task_batches is pruned daily, so it stays small;
-- the provider ids go through task_batches_provider_any_idx.
SELECT provider_batch_id AS id FROM task_batches WHERE provider_batch_id = ANY(:ids::text[])
UNION
SELECT extra FROM task_batches, unnest(extra_batch_ids) AS extra
WHERE extra_batch_ids && :ids::text[] AND extra = ANY(:ids::text[])
