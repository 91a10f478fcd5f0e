-- Queued tasks whose message was sent before :cutoff, when the queue holds fewer messages than
-- that (owed_beyond.sql): their messages may be lost (a local queue that restarted empty, a purge).
-- Marked sent now, in the same statement, so concurrent restores split the page and a re-sent
-- task is not picked again; a failed send unmarks it (mark_unsent.sql).
UPDATE tasks SET message_sent_at = now() WHERE id IN (
    SELECT id FROM tasks
    WHERE status = 'queued' AND NOT awaiting_batch AND message_sent_at < :cutoff
    ORDER BY message_sent_at, id LIMIT :page
    FOR UPDATE SKIP LOCKED)
RETURNING id, app_id
