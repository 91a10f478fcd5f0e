-- What the repair turn of this attempt continues from, if a batch left one (taken: a later
-- attempt starts afresh).
DELETE FROM task_repairs WHERE task_id = :task_id AND attempt = :attempt
RETURNING resume
