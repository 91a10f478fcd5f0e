-- An operation's columns, as `Operation::from_row` reads them by name. The one home of this
-- list: every statement that answers an operation names this file (src/statement.rs).
id, app_id, action, filter, recompute, state, idempotency_key, cursor_at, cursor_id, matched, done,
    skipped, failed, skipped_because, failed_because, created_at, updated_at, ended_at
