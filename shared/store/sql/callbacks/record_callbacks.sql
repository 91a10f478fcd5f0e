-- What the calls came to, item i of every array being call i: `delivered` (AWS accepted it),
-- `gone` (the caller no longer waits), `refused` (AWS will never accept it), each clearing the
-- token; or `owed` again, due after :retry_ms. Only a callback still waiting or owed changes: a
-- late record of a duplicate call never undoes the first one's.
UPDATE task_callbacks
SET state = outcome.state,
    due_at = CASE WHEN outcome.state = 'owed'
                  THEN now() + outcome.retry_ms * interval '1 millisecond' END,
    token = CASE WHEN outcome.state = 'owed' THEN token END,
    ended_at = CASE WHEN outcome.state = 'owed' THEN NULL ELSE now() END,
    last_error = outcome.error
FROM unnest(:ids::bigint[], :states::text[], :retry_ms::bigint[], :errors::text[])
    AS outcome(id, state, retry_ms, error)
WHERE task_callbacks.id = outcome.id AND task_callbacks.state IN ('waiting', 'owed')
  AND (outcome.state <> 'owed' OR task_callbacks.state = 'owed')
RETURNING task_callbacks.id
