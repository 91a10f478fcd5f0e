//! Every statement of the store. Each one's full text is `shared/store/sql/<name>.sql`: open the
//! file to see exactly what runs and what it writes. The folders follow a task's life: `create`,
//! `batch` (deferred tasks and the provider batches that carry them), `callbacks`, `admission`, `read`, `lease`, `settle`, `cancel`, `sweep`, `events`, `history`, `owned`, `listing`,
//! `provider_limits`, `tenant_quota`, `runs`, `stats`. Parameters are named (`:task_id`) and
//! bound by name (`Sql::bind`); `tests/snapshots/statements.snap` shows every final statement as
//! Postgres gets it.
//!
//! Error codes are bound as parameters (from `aitasks_contracts::ErrorCode`). Statuses stay
//! literals in the SQL: the partial indexes (`WHERE status = 'queued'`, ...) are chosen only when
//! the planner can see the status, which a parameter would hide.

use crate::statement::Sql;

/// `NAME = "folder/file";` for each statement: a static `NAME` with the text of
/// `sql/folder/file.sql`, and [`ALL`] listing every one.
macro_rules! statements {
    ($($name:ident = $path:literal;)*) => {
        $(pub(crate) static $name: Sql = Sql::new($path, include_str!(concat!("../sql/", $path, ".sql")));)*
        /// All of them (the snapshot test prints each).
        pub(crate) static ALL: &[&Sql] = &[$(&$name),*];
    };
}

statements! {
    ADMIT = "admission/admit";
    INSERT_CACHED = "admission/insert_cached";
    LOCK_APP_EXCLUSIVE = "admission/lock_app_exclusive";
    LOCK_APP_SHARED = "admission/lock_app_shared";
    LOCK_SCOPE = "admission/lock_scope";
    LOCK_SYSTEM_EXCLUSIVE = "admission/lock_system_exclusive";
    LOCK_SYSTEM_SHARED = "admission/lock_system_shared";
    READ_STATE = "admission/read_state";
    RUN_FOR_SHARE = "admission/run_for_share";

    BATCH_ADD_EXTRAS = "batch/add_extras";
    BATCH_AWAITING = "batch/awaiting";
    BATCH_CLEANUP_DUE = "batch/cleanup_due";
    BATCH_CLEANUP_NEXT = "batch/cleanup_next";
    BATCH_END = "batch/end";
    BATCH_GIVE_BACK = "batch/give_back";
    BATCH_KNOWN_IDS = "batch/known_ids";
    BATCH_LOOK_LATER = "batch/look_later";
    BATCH_LOOK_NOW = "batch/look_now";
    BATCH_NEAREST_WINDOW = "batch/nearest_window";
    BATCH_OPEN = "batch/open";
    BATCH_PRUNE_ENDED = "batch/prune_ended";
    BATCH_READY = "batch/ready";
    BATCH_ROUTE_DUE = "batch/route_due";
    BATCH_ROUTE_NOW = "batch/route_now";
    BATCH_ROUTE_PROFILE = "batch/route_profile";
    BATCH_SUBMIT_REFUSED = "batch/submit_refused";
    BATCH_SUBMIT_SENDING = "batch/submit_sending";
    BATCH_SUBMITTED = "batch/submitted";
    BATCH_TAKE_DUE = "batch/take_due";
    BATCH_TASKS_OF = "batch/tasks_of";
    BATCH_UNSURE_ROWS = "batch/unsure_rows";
    BATCH_WAITING = "batch/waiting";

    ATTACH_CALLBACKS = "callbacks/attach";
    CALLBACK_ROOM = "callbacks/room";
    CANCEL_ABANDONED = "callbacks/cancel_abandoned";
    RECORD_CALLBACKS = "callbacks/record";
    TAKE_HEARTBEATS = "callbacks/take_heartbeats";
    TAKE_OWED = "callbacks/take_owed";

    CANCEL_RUN = "cancel/cancel_run";
    CANCEL_RUN_TASKS = "cancel/cancel_run_tasks";
    FINISH_RUN_CANCEL = "cancel/finish_run_cancel";
    PENDING_RUN_CANCELS = "cancel/pending_run_cancels";
    REQUEST_CANCEL = "cancel/request_cancel";

    INSERT_APP_TASK = "create/insert_app_task";
    INSERT_RUN_TASK = "create/insert_run_task";
    INSERT_TASKS = "create/insert_tasks";
    MARK_SENT = "create/mark_sent";
    MARK_POLLERS = "create/mark_pollers";
    MARK_SENT_MANY = "create/mark_sent_many";
    SELECT_BY_EFFECT_KEYS = "create/select_by_effect_keys";

    MARK_DELIVERED = "events/mark_delivered";
    MARK_PUBLISHED = "events/mark_published";
    PRUNE_DELIVERED = "events/prune_delivered";
    TAKE_UNDELIVERED = "events/take_undelivered";

    BATCH_OF_TASK = "history/batch_of_task";
    CALLBACKS_OF_TASK = "history/callbacks_of_task";
    EVENTS_OF_TASK = "history/events_of_task";
    RUNS_OF_APP = "history/runs_of_app";
    ATTEMPTS_OF_TASK = "history/attempts_of_task";
    SUMMARY_OF_APP = "history/summary_of_app";

    CHECK = "lease/check";
    CLAIM = "lease/claim";
    CLAIM_MISSES = "lease/claim_misses";
    HEARTBEAT = "lease/heartbeat";
    UNCLAIM = "lease/unclaim";

    TASKS_OF_RUN = "listing/tasks_of_run";
    TASKS_OF_SCOPE = "listing/tasks_of_scope";
    TASKS_OF_RUN_FILTERED = "listing/tasks_of_run_filtered";
    TASKS_OF_SCOPE_FILTERED = "listing/tasks_of_scope_filtered";

    DELETE_PAGE = "owned/delete_page";
    DELETE_RETAINED = "owned/delete_retained";
    RELEASE = "owned/release";
    UNRELEASED_SOURCES = "owned/unreleased_sources";
    UNRELEASED_SOURCES_OF_STEP = "owned/unreleased_sources_of_step";

    ENSURE_SLOTS = "provider_limits/ensure_slots";
    FREE_SLOT = "provider_limits/free_slot";
    PRUNE_LINE = "provider_limits/prune_line";
    PRUNE_MINUTES = "provider_limits/prune_minutes";
    SETTLE_TOKENS = "provider_limits/settle_tokens";
    START_CALL = "provider_limits/start_call";
    TAKE_SLOT = "provider_limits/take_slot";
    WAIT_IN_LINE = "provider_limits/wait_in_line";

    SELECT_TASK = "read/select_task";
    SELECT_TASK_BY_EFFECT_KEY = "read/select_task_by_effect_key";

    REPAIR_GIVE_BACK = "repair/give_back";
    REPAIR_READ = "repair/read";
    REPAIR_TAKE = "repair/take";

    INSERT_RUN = "runs/insert_run";
    SELECT_RUN = "runs/select_run";

    COMPLETE = "settle/complete";
    COMPLETE_MANY = "settle/complete_many";
    COMPLETE_UNSCOPED = "settle/complete_unscoped";
    END_CANCELED = "settle/end_canceled";
    FAIL = "settle/fail";
    FAIL_UNSCOPED = "settle/fail_unscoped";
    GIVE_BACK = "settle/give_back";
    REQUEUE = "settle/requeue";

    BACKLOG = "stats/backlog";
    OVERVIEW = "stats/overview";

    CLAIM_LOST = "sweep/claim_lost";
    CLAIM_UNSENT = "sweep/claim_unsent";
    EXPIRE_QUEUED = "sweep/expire_queued";
    EXPIRE_RUNNING = "sweep/expire_running";
    MARK_UNSENT = "sweep/mark_unsent";
    OWED_BEYOND = "sweep/owed_beyond";
    PRUNE_ADMISSIONS = "sweep/prune_admissions";

    PRUNE_DAYS = "tenant_quota/prune_days";
    SPEND_TASK = "tenant_quota/spend_task";
}

/// Every statement as `(name, text Postgres gets, parameter names in $n order)`.
pub fn statements() -> impl Iterator<Item = (&'static str, &'static str, &'static [String])> {
    ALL.iter().map(|sql| (sql.name, sql.text(), sql.names()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The snapshot a reviewer reads: every final statement, with what each `$n` is.
    #[test]
    fn every_statement_as_postgres_gets_it() {
        let mut out = String::new();
        for (name, text, params) in statements() {
            out.push_str(&format!("-- {name}\n"));
            for (i, param) in params.iter().enumerate() {
                out.push_str(&format!("--   ${} = :{param}\n", i + 1));
            }
            out.push_str(text);
            out.push_str(";\n\n");
        }
        insta::with_settings!({snapshot_path => "../tests/snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!("statements", out);
        });
    }

    /// The text from `start` to its matching closing parenthesis (or the end).
    fn balanced(text: &str, start: &str) -> Option<String> {
        let from = text.find(start)?;
        let mut depth = 0;
        for (i, c) in text[from..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 1 => return Some(text[from..=from + i].to_owned()),
                ')' => depth -= 1,
                _ => {}
            }
        }
        Some(text[from..].to_owned())
    }

    /// Pieces written out in several statements (rather than spliced from one place) must stay
    /// the same everywhere: the completion event's payload and the admission bookkeeping of a
    /// settlement.
    #[test]
    fn the_written_out_copies_agree() {
        for piece in [
            "jsonb_build_object('type', 'task.settled'",
            "freed AS (",
            "ended AS (UPDATE app_concurrency SET active = GREATEST(active - ended_count",
        ] {
            let copies: Vec<(&str, String)> = ALL
                .iter()
                .filter_map(|sql| balanced(sql.text(), piece).map(|copy| (sql.name, copy)))
                .collect();
            assert!(copies.len() >= 2, "{piece} appears in several statements");
            for (name, copy) in &copies {
                assert_eq!(copy, &copies[0].1, "{name} differs from {} in {piece}", copies[0].0);
            }
        }
    }

    /// A task enters at most one provider batch, and only before any on-demand claim: only a
    /// create sets `awaiting_batch`, and every other statement that writes it clears it. The
    /// heartbeat and the cancel check fence on `(task id, attempt)` alone because of this
    /// (docs/architecture.md, "Lifecycle").
    #[test]
    fn only_a_create_puts_a_task_in_line_for_a_batch() {
        let mut cleared = 0;
        for sql in
            ALL.iter().filter(|sql| !sql.name.starts_with("create/") && !sql.name.starts_with("admission/"))
        {
            let text = sql.text();
            for (at, _) in text.match_indices("awaiting_batch = ") {
                let value = &text[at + "awaiting_batch = ".len()..];
                assert!(value.starts_with("false"), "{} sets awaiting_batch to {:.20}", sql.name, value);
                cleared += 1;
            }
        }
        assert!(cleared >= 3, "{cleared} statements clear awaiting_batch");
    }

    /// The task's columns, as every statement that returns a whole task lists them (the order
    /// `Task::from_row` reads them by name, so a column missing from one copy is a runtime error
    /// on that path only).
    #[test]
    fn every_whole_task_is_returned_with_the_same_columns() {
        const COLUMNS: &str = "id, app_id, run_id, usage_subject, usage_user_id, scope_id, source_id, \
            cache_key, step_key, effect_key, kind, request, input_hash, model_id, model_ref, \
            model_config_hash, status, output, usage, attempts, max_attempts, error_code, \
            error_message, cancel_requested_at, heartbeat_at, released_at, created_at, started_at, \
            completed_at, updated_at, trace_header, deferred_by, awaiting_batch";
        let marker = "run_id, usage_subject, usage_user_id, scope_id";
        // Statements that leave a column out on purpose, each saying why in its file.
        let partial = ["create/select_by_effect_keys"];
        let mut copies = 0;
        for sql in ALL.iter().filter(|sql| !partial.contains(&sql.name)) {
            let text = sql.text();
            let mut rest = text;
            while let Some(at) = rest.find(marker) {
                let start = rest[..at].rfind("id, app_id, ").unwrap_or(at);
                let list = &rest[start..];
                assert!(
                    list.starts_with(COLUMNS),
                    "{}: the task's columns differ from the other copies:\n{}",
                    sql.name,
                    &list[..list.len().min(COLUMNS.len() + 40)]
                );
                copies += 1;
                rest = &rest[at + marker.len()..];
            }
        }
        assert!(copies >= 8, "{copies} copies of the task's columns");
    }

    #[test]
    fn names_are_unique_and_match_their_files() {
        let mut names: Vec<&str> = ALL.iter().map(|sql| sql.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for sql in ALL {
            assert!(!sql.text().contains(" :"), "{}: an unconverted parameter", sql.name);
        }
    }

    /// Every file under `sql/` is a statement the store runs: a statement nobody calls any more
    /// is deleted with its caller, not left behind.
    #[test]
    fn every_sql_file_is_a_statement() {
        fn files(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    files(&path, base, out);
                } else if path.extension().is_some_and(|e| e == "sql") {
                    let name = path.strip_prefix(base).unwrap().with_extension("");
                    out.push(name.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sql");
        let mut on_disk = Vec::new();
        files(&base, &base, &mut on_disk);
        on_disk.sort_unstable();
        let mut listed: Vec<String> = ALL.iter().map(|sql| sql.name.to_owned()).collect();
        listed.sort_unstable();
        assert_eq!(on_disk, listed);
    }
}
