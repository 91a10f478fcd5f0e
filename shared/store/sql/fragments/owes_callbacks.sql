-- Whether the ending of this row's task made callbacks owed, as the trigger on `tasks` found
-- them for this very row (migrations/V41: it sets `aitasks.owes_callbacks` for each row of a
-- statement that hands events over, and the row's RETURNING is computed right after it).
current_setting('aitasks.owes_callbacks', true) IS NOT DISTINCT FROM 'on' AS owes_callbacks
