-- A page of a released hold's parked tasks, in creation order: taken off its list, and those
-- still parked made owed again (`message_sent_at` now: the caller sends their messages, and a
-- failed send unmarks them for the sweeper, sweep/mark_unsent.sql), their queue timeout counted
-- from now (`unheld_at`). A task still held by another hold is parked again by its next claim.
-- The hold is marked `resent` once a page finds fewer than :page rows left. SKIP LOCKED: the
-- release and the sweeper share the pages.
WITH taken AS (
    DELETE FROM held_tasks
    WHERE hold_id = :hold_id AND task_id IN (
        SELECT task_id FROM held_tasks WHERE hold_id = :hold_id
        ORDER BY task_id LIMIT :page FOR UPDATE SKIP LOCKED)
    RETURNING task_id
),
resent AS (
    UPDATE tasks SET message_sent_at = now(), unheld_at = now(), updated_at = now()
    WHERE id IN (SELECT task_id FROM taken) AND status = 'queued' AND message_sent_at = 'infinity'
    RETURNING id, app_id
),
finished AS (
    UPDATE holds SET resent = true
    WHERE id = :hold_id AND released_at IS NOT NULL AND (SELECT count(*) FROM taken) < :page
    RETURNING id
)
SELECT resent.id, resent.app_id, (SELECT count(*) FROM taken) AS taken
FROM (SELECT 1) one LEFT JOIN resent ON true
ORDER BY resent.id
