-- A create that names no callback waits for its task by reading it (GET, a long poll): such a
-- caller counts as waiting for as long as the task lives, so the task is never canceled for
-- want of callers (callbacks/cancel_abandoned.sql) once one such create has named it, even when
-- a later create by the same effect key attached a callback that has since gone.
--
-- The rows already there count as polled: who created them is not known, and the safe reading
-- is that someone may be reading them. New rows say it themselves (the create's inserts set it,
-- create/mark_pollers.sql sets it when a create without a callback finds an existing task).
-- Both ALTERs only change the catalog: no table rewrite, no scan.
ALTER TABLE tasks ADD COLUMN has_poller boolean NOT NULL DEFAULT true;
ALTER TABLE tasks ALTER COLUMN has_poller SET DEFAULT false;
