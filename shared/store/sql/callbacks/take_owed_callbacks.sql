-- A page of owed callbacks whose time has come, hidden from other senders for :lease_ms (one whose
-- outcome is not recorded by then comes back: a sender that died between its call and its
-- record), each with what its task ended as.
WITH taken AS (
    UPDATE task_callbacks
    SET due_at = now() + :lease_ms::bigint * interval '1 millisecond', tries = tries + 1
    WHERE id IN (SELECT id FROM task_callbacks
                 WHERE state = 'owed' AND due_at <= now()
                 ORDER BY due_at, id LIMIT :page
                 FOR UPDATE SKIP LOCKED)
    RETURNING id, task_id, kind, token, tries
)
SELECT taken.id, taken.task_id, taken.kind, taken.token, taken.tries, tasks.status, tasks.output,
    tasks.usage, tasks.error_code, tasks.error_message
FROM taken JOIN tasks ON tasks.id = taken.task_id
