-- V38's check that a running task has a holder's time (a heartbeat on-demand, a lease in a
-- batch), validated over the rows written before it. A migration of its own: V38 holds `tasks`
-- exclusively until it commits, while a validation takes only a SHARE UPDATE EXCLUSIVE lock,
-- with which creates, claims and settlements go on while the table is scanned.
ALTER TABLE tasks VALIDATE CONSTRAINT tasks_running_holder_check;
