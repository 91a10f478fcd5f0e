-- Whether this statement hands its completion events over to its caller's publish (:hand_over,
-- 'on' from process-task, 'off' from the batcher): the trigger on `tasks` then writes each event
-- already delivered, and only a publish that fails marks it back (migrations/V41). Set for the
-- transaction as the row is found, before the trigger runs for it: a condition that is always
-- true, evaluated for each row the fence lets through. The setting lasts the transaction, so a
-- statement that hands over must be its transaction's last that ends a task: every caller runs
-- it alone (autocommit).
set_config('aitasks.hand_over_events', :hand_over, true) IS NOT NULL
