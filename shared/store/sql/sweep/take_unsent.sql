-- Queued tasks whose message is owed: never sent (a new task once it is older than :grace_ms, so
-- a create whose send is in flight is left alone; a requeued one at once), or sent longer than
-- :resend_after_ms ago (lost). Marked sent in the same statement, so concurrent sweepers split
-- the page; a failed send unmarks them (mark_unsent.sql). A deferred task awaiting a batch
-- owes no message (tasks_unsent_at_idx leaves it out).
UPDATE tasks SET message_sent_at = now() WHERE id IN (
    SELECT id FROM tasks
    WHERE status = 'queued' AND NOT awaiting_batch
      AND ((message_sent_at IS NULL
            AND (attempts > 0 OR created_at < now() - :grace_ms::bigint * interval '1 millisecond'))
           OR message_sent_at < now() - :resend_after_ms::bigint * interval '1 millisecond')
    ORDER BY message_sent_at NULLS FIRST, id LIMIT :page
    FOR UPDATE SKIP LOCKED)
RETURNING id, app_id
