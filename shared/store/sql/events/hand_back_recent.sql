-- The local stack's start (the dev server): its SQS-compatible server keeps messages in memory,
-- so after a restart no task message stands behind an event handed over (migrations/V41) whose
-- worker died with it before its publish. The events handed over after :since (the caller's
-- window, back from the newest handed-over event: events/newest_handed_over) are given back to
-- the outbox, undelivered and due to the sweeper at once: those published already go out a
-- second time (delivery is at least once). A page at a time, newest first, through
-- `task_events_delivered_idx`.
UPDATE task_events SET delivered_at = NULL, available_at = now(), handed_over = false
WHERE id IN (SELECT id FROM task_events
             WHERE delivered_at > :since AND handed_over
             ORDER BY delivered_at DESC
             LIMIT :page
             FOR UPDATE SKIP LOCKED)
