-- When the newest event still handed over (migrations/V41) was written: the end of the window
-- the local stack's start gives back (events/hand_back_recent). Through the delivered index,
-- read backwards from its newest entry.
SELECT max(delivered_at) AS newest FROM task_events WHERE handed_over
