-- A batch is done with: its tasks are settled, or were sent on-demand.
UPDATE task_batches
SET state = 'ended', outcome = :outcome, ended_at = now(), last_error = COALESCE(:error, last_error)
WHERE id = :batch_id AND state <> 'ended'
