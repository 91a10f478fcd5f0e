-- A publish of events handed over to it (migrations/V41) that did not go through: they are
-- written back as the outbox's, undelivered and due to the sweeper at once
-- (events/take_undelivered_events), as if never handed over. An event the sweeper or another
-- worker took back meanwhile (no longer `handed_over`) is left as it is.
--
-- The events are looked up one id at a time through the primary key, in id order, and locked as
-- they are found, as the publish mark looks up its own (callbacks/mark_delivered_and_take_owed;
-- docs/architecture.md, "A list of ids is looked up one id at a time").
UPDATE task_events SET delivered_at = NULL, available_at = now(), handed_over = false
WHERE id IN (SELECT event.id
             FROM (SELECT i FROM generate_subscripts(:event_ids::bigint[], 1) AS i
                   ORDER BY (:event_ids::bigint[])[i]) AS wanted
             CROSS JOIN LATERAL (SELECT id FROM task_events
                                 WHERE id = (:event_ids::bigint[])[wanted.i] AND handed_over
                                 FOR UPDATE) AS event)
