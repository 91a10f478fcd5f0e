-- Tasks awaiting a batch that run on-demand instead (their group is below the profile's
-- `minRecords`, or the profile no longer batches): their message is owed from now, marked sent
-- here and sent by the batcher (a failed send is given back, sweep/mark_unsent.sql).
UPDATE tasks SET awaiting_batch = false, message_sent_at = now(), updated_at = now()
WHERE id = ANY(:task_ids::uuid[]) AND status = 'queued' AND awaiting_batch
RETURNING id, app_id
