-- Stop a running operation of the tenant: no page starts after this. A page in flight holds the
-- operation's row (take_operation.sql), so this waits for it to commit, and then stops what is
-- left (or finds the operation done). Nothing comes back when it was not running.
UPDATE operations SET state = 'stopped', ended_at = now(), updated_at = now()
WHERE id = :id AND app_id = :app_id AND state = 'running'
RETURNING {{fragments/operation_columns}}
