-- The repair turn of this attempt is spent: its first provider call went out (or the attempt
-- ended otherwise than given back unworked), so a later attempt starts afresh. An attempt given
-- back unworked leaves it for the next claim, which has the same attempt number.
DELETE FROM task_repairs WHERE task_id = :task_id AND attempt = :attempt
