-- Mark an application-owned task released: its result may go once retention has passed.
UPDATE tasks SET released_at = COALESCE(released_at, now())
WHERE app_id = :app_id AND scope_id = :scope_id AND effect_key = :effect_key AND run_id IS NULL
RETURNING id
