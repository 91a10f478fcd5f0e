-- The completion trigger of V19 (task_events_owe_callbacks) looks before it writes.
--
-- Every terminal transition inserts its completion event, and the trigger made the task's
-- waiting callbacks owed with an UPDATE. Most tasks have no callback, but an UPDATE opens
-- task_callbacks and every one of its indexes for writing whether or not it finds a row: five
-- more relation locks on every settlement, past the sixteen a session takes on the fast path,
-- so each went through the shared lock manager (`LWLock:LockManager` in the waits of the
-- lifecycle benchmark, BENCHMARKS.md, issue 37). A read first takes the table and the one index
-- it probes; the UPDATE runs only for a task that has a waiting callback.
--
-- Both statements take a fresh snapshot (READ COMMITTED, a VOLATILE function), as the UPDATE
-- alone did. A create that attaches a callback reads the task FOR SHARE (sql/callbacks/
-- attach.sql) while the transition holds the task's row lock, so it cannot commit between the
-- read and the write: it waits, then finds the task ended and answers the callback at once.
CREATE OR REPLACE FUNCTION task_callbacks_owe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM task_callbacks WHERE task_id = NEW.task_id AND state = 'waiting') THEN
        UPDATE task_callbacks SET state = 'owed', due_at = now()
        WHERE task_id = NEW.task_id AND state = 'waiting';
    END IF;
    RETURN NULL;
END
$$;
