-- The create's send succeeded. A lost mark only makes the sweeper send again (the duplicate
-- claims nothing), so it commits without waiting for the WAL flush. (SELECT 'queued'::text):
-- see lease/claim_by.sql.
UPDATE tasks SET message_sent_at = now() WHERE id = :task_id AND status = (SELECT 'queued'::text)
RETURNING set_config('synchronous_commit', 'off', true) AS commit_without_flush_wait
