-- The queue timeout bounds a task's time in the system from its creation, not from its last
-- update: a task given back again and again at a provider limit (each give-back touches
-- updated_at) still ends. The sweeper's expire_queued.sql scans queued tasks by creation.
CREATE INDEX IF NOT EXISTS tasks_queued_created_idx ON tasks (created_at) WHERE status = 'queued';
