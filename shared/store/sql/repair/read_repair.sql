-- What the repair turn of this attempt continues from, if a batch left one: read, not taken
-- (take_repair.sql takes it once the attempt has worked), so an attempt given back unworked
-- (out of time before its call, every profile at its limit) leaves it to the next claim.
SELECT resume FROM task_repairs WHERE task_id = :task_id AND attempt = :attempt
