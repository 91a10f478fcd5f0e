-- The run a scoped create joins, locked FOR SHARE so a cancel of the run waits for the create.
SELECT scope_id, state, actor ->> 'userId' AS user_id FROM runs
WHERE id = :run_id AND app_id = :app_id
FOR SHARE
