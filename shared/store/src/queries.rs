//! Every statement of the store. Each one's text is `shared/store/sql/<module>/<function>.sql`:
//! the folder is the module of `src/` that runs it and the file is named for the function that
//! does (`sql/settle/complete_attempt.sql` is run by `settle::complete_attempt`; a function that
//! runs several adds a word: `claim_by_misses.sql`), so the
//! statement of a function and the function of a statement are found by name. The few steps of
//! one function named for their step instead are listed in the test
//! `every_statement_is_named_for_its_function` (the admission steps of `create_scoped`, say). Open the file to
//! see exactly what runs and what it writes. A piece several statements share is written once in
//! `sql/fragments/` and named where it goes (`{{fragments/ended_event}}`, see `statement.rs`).
//! What follows a change of a task's status (its completion event, callbacks owed, a scoped
//! task's step and count, the attempt's record) is no statement's: the trigger on `tasks`
//! writes it (migrations/V38).
//! Parameters are named (`:task_id`) and bound by name (`Sql::bind`);
//! `tests/snapshots/statements.snap` shows every final statement as Postgres gets it, with the
//! fragments it includes.
//!
//! Error codes are bound as parameters (from `aitasks_contracts::ErrorCode`). Statuses stay
//! literals in the SQL: the partial indexes (`WHERE status = 'queued'`, ...) are chosen only when
//! the planner can see the status, which a parameter would hide.

use crate::statement::{Fragment, Sql};

/// `NAME = "folder/file";` for each statement: a static `NAME` with the text of
/// `sql/folder/file.sql`, and [`ALL`] listing every one.
macro_rules! statements {
    ($($name:ident = $path:literal;)*) => {
        $(pub(crate) static $name: Sql =
            Sql::new($path, include_str!(concat!("../sql/", $path, ".sql")), FRAGMENTS);)*
        /// All of them (the snapshot test prints each).
        pub(crate) static ALL: &[&Sql] = &[$(&$name),*];
        /// Each one's constant and name (the test of names reads them).
        #[cfg(test)]
        static ALL_NAMES: &[(&str, &str)] = &[$((stringify!($name), $path)),*];
    };
}

/// `"fragments/file",` for each piece several statements share: [`FRAGMENTS`], with the text of
/// `sql/fragments/file.sql`. A statement names one where it goes: `{{fragments/file}}`.
macro_rules! fragments {
    ($($path:literal,)*) => {
        pub(crate) static FRAGMENTS: &[Fragment] = &[$(Fragment {
            name: $path,
            source: include_str!(concat!("../sql/", $path, ".sql")),
        }),*];
    };
}

fragments! {
    // A fragment may name only those after it (they are spliced in this order).
    // The completion event of a row the statement ended (the trigger wrote it), for the caller.
    "fragments/ended_event",
    // Whether the statement hands its events over to its caller's publish (migrations/V41).
    "fragments/hand_over",
    // Whether the trigger made this row's callbacks owed (a statement that hands events over).
    "fragments/owes_callbacks",
    // What a cancel writes on a task it reaches: ended if queued or in a batch, else flagged.
    "fragments/cancel_set",
    // The lease's fence: the task still runs this attempt, in its batch, with no cancel asked.
    "fragments/attempt_fence",
    // A narrowed listing's page, after the statement's own walk `examined`.
    "fragments/narrowed_page",
    // A whole task's columns, as `Task::from_row` reads them.
    "fragments/task_columns",
    // The tenants with waiting callbacks (a loose scan), for the heartbeat duty's statements.
    "fragments/waiting_tenants",
    // An operation's columns, as `operation_from_row` reads them.
    "fragments/operation_columns",
    // Whether a task an operation's walk looked at matches its filter.
    "fragments/operation_match",
    // A run's tasks counted by status over its first ones, for a page of runs and a run's progress.
    "fragments/run_task_counts",
}

statements! {
    ACTIVITY = "activity/activity";
    FOLD_ACTIVITY = "activity/fold_activity";
    PRUNE_ACTIVITY = "activity/prune_activity";

    ADMIT = "admission/admit";
    INSERT_CACHED = "admission/insert_cached";
    LOCK_APP_EXCLUSIVE = "admission/lock_app_exclusive";
    LOCK_APP_SHARED = "admission/lock_app_shared";
    LOCK_SCOPE = "admission/lock_scope";
    LOCK_SYSTEM_EXCLUSIVE = "admission/lock_system_exclusive";
    LOCK_SYSTEM_SHARED = "admission/lock_system_shared";
    READ_STATE = "admission/read_state";
    RUN_FOR_SHARE = "admission/run_for_share";

    ADD_EXTRA_BATCHES = "batch_copies/add_extra_batches";
    KNOWN_PROVIDER_BATCHES = "batch_copies/known_provider_batches";
    NEXT_BATCH_CLEANUP = "batch_copies/next_batch_cleanup";
    NOTE_SUBMIT_REFUSED = "batch_copies/note_submit_refused";
    NOTE_SUBMIT_SENDING = "batch_copies/note_submit_sending";
    OTHER_ROWS_UNSURE = "batch_copies/other_rows_unsure";
    TAKE_BATCH_LEFTOVERS = "batch_copies/take_batch_leftovers";

    BATCH_WAITING = "batch_form/batch_waiting";
    FORM_BATCH_LOCK = "batch_form/form_batch_lock";
    FORM_BATCH_OPEN = "batch_form/form_batch_open";
    FORM_BATCH_SEND_NOW = "batch_form/form_batch_send_now";
    NEAREST_WINDOW = "batch_form/nearest_window";
    NOT_READY = "batch_form/not_ready";
    SEND_DUE_NOW = "batch_form/send_due_now";
    SEND_PROFILE_NOW = "batch_form/send_profile_now";

    BATCH_TASKS = "batches/batch_tasks";
    END_BATCH = "batches/end_batch";
    GIVE_BACK_BATCH = "batches/give_back_batch";
    LOOK_AT_BATCH_LATER = "batches/look_at_batch_later";
    LOOK_AT_BATCH_NOW = "batches/look_at_batch_now";
    MARK_BATCH_SUBMITTED = "batches/mark_batch_submitted";
    PRUNE_ENDED_BATCHES = "batches/prune_ended_batches";
    TAKE_DUE_BATCHES = "batches/take_due_batches";

    ATTACH_CALLBACKS = "callbacks/attach_callbacks";
    CALLBACK_ROOM = "callbacks/callback_room";
    CANCEL_ABANDONED = "callbacks/cancel_abandoned";
    MARK_DELIVERED_AND_TAKE_OWED = "callbacks/mark_delivered_and_take_owed";
    RECORD_CALLBACKS = "callbacks/record_callbacks";
    TAKE_HEARTBEATS = "callbacks/take_heartbeats";
    TAKE_OWED_CALLBACKS = "callbacks/take_owed_callbacks";
    UNMARK_HEARTBEATS = "callbacks/unmark_heartbeats";
    WAITING_CALLBACKS = "callbacks/waiting_callbacks";

    CANCEL_RUN = "cancel/cancel_run";
    CANCEL_RUN_TASKS = "cancel/cancel_run_tasks";
    FINISH_RUN_CANCEL = "cancel/finish_run_cancel";
    PENDING_RUN_CANCELS = "cancel/pending_run_cancels";
    REQUEST_CANCEL = "cancel/request_cancel";

    EXISTING_BY_KEY = "create/existing_by_key";
    INSERT_ALL = "create/insert_all";
    INSERT_APP_TASK = "create/insert_app_task";
    INSERT_RUN_TASK = "create/insert_run_task";
    MARK_POLLERS = "create/mark_pollers";
    OWE_AGAIN = "create/owe_again";

    HAND_BACK = "events/hand_back";
    HAND_BACK_RECENT = "events/hand_back_recent";
    MARK_DELIVERED = "events/mark_delivered";
    NEWEST_HANDED_OVER = "events/newest_handed_over";
    PRUNE_DELIVERED_EVENTS = "events/prune_delivered_events";
    TAKE_HANDED_OVER = "events/take_handed_over";
    TAKE_UNDELIVERED_EVENTS = "events/take_undelivered_events";

    AUTOMATIC_HOLDS_ACTIVE = "holds/automatic_holds_active";
    CLAIM_PROBE = "holds/claim_probe";
    GET_HOLD = "holds/get_hold";
    LIST_HOLDS = "holds/list_holds";
    NOTE_FAILURE = "holds/note_failure";
    PARK = "holds/park";
    PLACE_HOLD = "holds/place_hold";
    RELEASE_HOLD = "holds/release_hold";
    RESEND_HELD = "holds/resend_held";
    RESET_FAILURES = "holds/reset_failures";
    TAKE_PROBE = "holds/take_probe";
    UNFINISHED_HOLDS = "holds/unfinished_holds";

    LIST_RUNS = "history/list_runs";
    TASK_BATCH = "history/task_batch";
    TASK_CALLBACKS = "history/task_callbacks";
    TASK_EVENTS = "history/task_events";

    TASK_ATTEMPTS = "attempts/task_attempts";

    SUMMARY = "summary/summary";

    CHECK = "lease/check";
    CLAIM_BY = "lease/claim_by";
    CLAIM_BY_MISSES = "lease/claim_by_misses";
    HEARTBEAT = "lease/heartbeat";
    GIVE_BACK_CLAIMS = "lease/give_back_claims";

    LIST_TASKS_OF_RUN = "listing/list_tasks_of_run";
    LIST_TASKS_OF_SCOPE = "listing/list_tasks_of_scope";
    LIST_TASKS_NARROWED_OF_RUN = "listing/list_tasks_narrowed_of_run";
    LIST_TASKS_NARROWED_OF_SCOPE = "listing/list_tasks_narrowed_of_scope";

    DELETE_OWNED_PAGE = "owned/delete_owned_page";
    DELETE_RETAINED = "owned/delete_retained";
    RELEASE = "owned/release";
    UNRELEASED_SOURCES = "owned/unreleased_sources";
    UNRELEASED_SOURCES_OF_STEP = "owned/unreleased_sources_of_step";

    ENSURE_SLOTS = "provider_limits/ensure_slots";
    FREE_SLOT = "provider_limits/free_slot";
    PRUNE_PROVIDER_LINE = "provider_limits/prune_provider_line";
    PRUNE_PROVIDER_MINUTES = "provider_limits/prune_provider_minutes";
    RECONCILE_TOKENS = "provider_limits/reconcile_tokens";
    START_CALL = "provider_limits/start_call";
    TAKE_SLOT = "provider_limits/take_slot";
    WAIT_IN_LINE = "provider_limits/wait_in_line";

    GET_TASK = "read/get_task";
    GET_TASK_BY_EFFECT_KEY = "read/get_task_by_effect_key";

    GIVE_BACK_FOR_REPAIR = "repair/give_back_for_repair";
    READ_REPAIR = "repair/read_repair";
    TAKE_REPAIR = "repair/take_repair";

    CREATE_RUN = "runs/create_run";
    GET_RUN = "runs/get_run";
    RUN_PROGRESS = "runs/run_progress";

    COMPLETE_ATTEMPT = "settle/complete_attempt";
    COMPLETE_MANY = "settle/complete_many";
    END_CANCELED = "settle/end_canceled";
    FAIL_ATTEMPT = "settle/fail_attempt";
    GIVE_BACK = "settle/give_back";
    REQUEUE_ATTEMPT = "settle/requeue_attempt";

    BACKLOG = "stats/backlog";
    OVERVIEW = "stats/overview";

    EXPIRE_QUEUED = "sweep/expire_queued";
    EXPIRE_RUNNING = "sweep/expire_running";
    MARK_UNSENT = "sweep/mark_unsent";
    OWED_BEYOND = "sweep/owed_beyond";
    PRUNE_ADMISSIONS = "sweep/prune_admissions";
    TAKE_LOST = "sweep/take_lost";
    TAKE_STALE_RUNNING = "sweep/take_stale_running";
    TAKE_UNSENT = "sweep/take_unsent";

    SPEND_READS = "read_rate/spend_reads";

    // Replays and operations (migrations/V33).
    APPEND_CHUNK = "output/append_chunk";
    OPEN_SEGMENT = "output/open_segment";
    PRUNE_OUTPUTS = "output/prune_outputs";
    READ_OUTPUT = "output/read_output";
    REPLAY_SOURCES = "replays/replay_sources";
    TASK_REPLAYS = "replays/task_replays";
    ADVANCE_OPERATION = "operations/advance_operation";
    CANCEL_OPERATION_PAGE = "operations/cancel_operation_page";
    CREATE_OPERATION = "operations/create_operation";
    CREATE_OPERATION_LOCK = "operations/create_operation_lock";
    GET_OPERATION = "operations/get_operation";
    LIST_OPERATIONS = "operations/list_operations";
    NEXT_OPERATIONS = "operations/next_operations";
    STOP_OPERATION = "operations/stop_operation";
    TAKE_OPERATION = "operations/take_operation";
    WALK_OPERATION_OF_RUN = "operations/walk_operation_of_run";
    WALK_OPERATION_OF_SCOPE = "operations/walk_operation_of_scope";
    WALK_OPERATION_OF_TENANT = "operations/walk_operation_of_tenant";

    PRUNE_QUOTA_DAYS = "tenant_quota/prune_quota_days";
    SPEND_TASK = "tenant_quota/spend_task";
}

/// Every statement as `(name, text Postgres gets, parameter names in $n order)`.
pub fn statements() -> impl Iterator<Item = (&'static str, &'static str, &'static [String])> {
    ALL.iter().map(|sql| (sql.name, sql.text(), sql.names()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statement::folded;

    /// The snapshot a reviewer reads: every final statement, with what each `$n` is.
    #[test]
    fn every_statement_as_postgres_gets_it() {
        let mut out = String::new();
        for sql in ALL {
            let (name, text, params) = (sql.name, sql.text(), sql.names());
            out.push_str(&format!("-- {name}\n"));
            for fragment in sql.includes() {
                out.push_str(&format!("--   with {fragment}\n"));
            }
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

    /// The pieces several statements share have one home each, `sql/fragments/`: no statement
    /// writes one out itself, and every fragment is named by a statement.
    #[test]
    fn every_shared_piece_has_one_home() {
        // A phrase of each fragment that no statement writes out itself.
        let phrases = [
            ("fragments/ended_event", "ended_event_id AS event_id"),
            ("fragments/hand_over", "set_config('aitasks.hand_over_events'"),
            ("fragments/owes_callbacks", "current_setting('aitasks.owes_callbacks', true)"),
            ("fragments/cancel_set", "WHEN status = 'queued' OR batch_id IS NOT NULL THEN 'canceled'"),
            ("fragments/attempt_fence", "batch_id IS NOT DISTINCT FROM $"),
            ("fragments/narrowed_page", "SELECT page.*, edge.last_examined"),
            (
                "fragments/task_columns",
                "kind, request, input_hash, model_id, model_ref, model_config_hash, status",
            ),
            ("fragments/waiting_tenants", "WHERE next.state = 'waiting' AND next.app_id > tenants.app_id"),
            ("fragments/operation_columns", "recompute, state, idempotency_key, cursor_at"),
            (
                "fragments/operation_match",
                "OR error_code = $4::text) AND ($5::timestamptz IS NULL OR created_at >=",
            ),
            ("fragments/run_task_counts", "SELECT status, row_number() OVER (ORDER BY tasks.id) AS n"),
        ];
        for (name, phrase) in phrases {
            let fragment = FRAGMENTS.iter().find(|f| f.name == name).unwrap();
            assert!(fragment.written().contains(phrase), "{name} holds {phrase}");
            let others = ALL
                .iter()
                .map(|sql| (sql.name, sql.written()))
                .chain(FRAGMENTS.iter().filter(|f| f.name != name).map(|f| (f.name, f.written())));
            for (other, written) in others {
                assert!(!written.contains(phrase), "{other} writes out {phrase}: name {name} instead");
            }
        }
        assert_eq!(FRAGMENTS.len(), phrases.len(), "each fragment has its phrase here");
        for fragment in FRAGMENTS {
            let users = ALL.iter().filter(|sql| sql.includes().contains(&fragment.name)).count();
            assert!(
                users >= 2,
                "{} is named by {users} statements: a piece of one belongs in it",
                fragment.name
            );
        }
    }

    /// What follows a change of a task's status has one home, the trigger on `tasks`
    /// (migrations/V38): no statement writes the outbox, owes callbacks, frees a step or lowers a
    /// count itself; and every statement that can end a task answers the event the trigger wrote
    /// (`fragments/ended_event`), so its caller can publish it.
    #[test]
    fn what_follows_a_task_status_change_is_the_triggers_alone() {
        let consequences = [
            "INSERT INTO task_events",
            "UPDATE task_callbacks SET state = 'owed'",
            "UPDATE scope_admissions SET logical_key = NULL",
            "UPDATE app_concurrency SET active = GREATEST",
        ];
        for sql in ALL {
            let text = folded(sql.text());
            for consequence in consequences {
                assert!(!text.contains(consequence), "{} writes {consequence}: the trigger's job", sql.name);
            }
        }
        let mut ending = 0;
        for sql in ALL {
            let text = folded(sql.text());
            let ends = ["'succeeded'", "'failed'", "'canceled'", "decided.new_status"].iter().any(|status| {
                text.contains(&format!("SET status = {status}"))
                    || text.contains(&format!("THEN {status}"))
                    || text.contains(&format!("{status}, $"))
            });
            if ends {
                ending += 1;
                assert!(
                    sql.includes().contains(&"fragments/ended_event"),
                    "{} ends a task without answering its event (fragments/ended_event)",
                    sql.name
                );
            }
        }
        assert!(ending >= 10, "{ending} statements end a task");
    }

    /// Every fragment a statement names is spliced in (a misspelt name would reach Postgres); a
    /// fragment names only those listed after it; and a name is never written in a comment (it would be spliced
    /// there, and the fragment's text after its first line would run).
    #[test]
    fn every_statement_is_spliced_whole() {
        for sql in ALL {
            assert!(
                !sql.text().contains("{{") && !sql.text().contains("}}"),
                "{}: a name left over",
                sql.name
            );
        }
        let sources = ALL
            .iter()
            .map(|sql| (sql.name, sql.source()))
            .chain(FRAGMENTS.iter().map(|f| (f.name, f.source)));
        for (name, source) in sources {
            for line in source.lines() {
                if let Some((_, comment)) = line.split_once("--") {
                    assert!(!comment.contains("{{"), "{name}: a fragment named in a comment: {line}");
                }
            }
        }
        for (at, fragment) in FRAGMENTS.iter().enumerate() {
            for before in &FRAGMENTS[..=at] {
                assert!(
                    !fragment.source.contains(&before.marker()),
                    "{} names {}: a fragment names only those listed after it",
                    fragment.name,
                    before.name
                );
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
            let text = folded(sql.text());
            for (at, _) in text.match_indices("awaiting_batch = ") {
                let value = &text[at + "awaiting_batch = ".len()..];
                assert!(value.starts_with("false"), "{} sets awaiting_batch to {:.20}", sql.name, value);
                cleared += 1;
            }
        }
        assert!(cleared >= 3, "{cleared} statements clear awaiting_batch");
    }

    /// A whole task's columns are read from one list, fragments/task_columns.sql: no statement or
    /// other fragment writes a list of the task's columns itself (`Task::from_row` would fail
    /// only on that path), except `create/existing_by_key`, which leaves out `request` on purpose
    /// and is otherwise the same list.
    #[test]
    fn every_whole_task_is_read_with_the_one_column_list() {
        let columns = FRAGMENTS.iter().find(|f| f.name == "fragments/task_columns").unwrap().written();
        let start = "id, app_id, run_id, usage_subject";
        let without_request = columns.replacen(", request,", ",", 1);
        let own_lists = ALL.iter().map(|sql| (sql.name, sql.written())).chain(
            FRAGMENTS.iter().filter(|f| f.name != "fragments/task_columns").map(|f| (f.name, f.written())),
        );
        let mut partial = 0;
        for (name, written) in own_lists {
            if !written.contains(start) {
                continue;
            }
            assert_eq!(
                name, "create/existing_by_key",
                "{name} lists the task's columns: name fragments/task_columns"
            );
            assert!(
                written.contains(&without_request),
                "{name}: the column list less `request`, in the same order"
            );
            partial += 1;
        }
        assert_eq!(partial, 1);
    }

    /// Every statement that changes a running attempt is fenced on the lease by the one fence,
    /// fragments/attempt_fence.sql, or is listed here with why its fence differs.
    #[test]
    fn every_running_attempt_is_fenced_by_the_one_fence() {
        let own_fences = [
            // Fenced on (task id, attempt) alone: a task enters a provider batch only before any
            // claim (only_a_create_puts_a_task_in_line_for_a_batch), and the cancel check must
            // see a cancel.
            "lease/check",
            "lease/heartbeat",
            // The same fence item by item, for many attempts in one statement.
            "settle/complete_many",
            // The same fence item by item, save the cancel: a stale attempt whose cancel was
            // requested is ended `canceled` by it.
            "sweep/expire_running",
            // Stricter: only a task still in the given provider batch goes back.
            "repair/give_back_for_repair",
            // Live output changes no task: its chunks are written while the task runs this
            // attempt, as lease/check reads it (a canceled task's stream may end its segment).
            "output/append_chunk",
            "output/open_segment",
        ];
        let mut fenced = 0;
        for sql in ALL {
            let text = folded(sql.text());
            if !(text.contains("status = 'running' AND attempts =")
                || text.contains("status = 'running' AND tasks.attempts ="))
            {
                continue;
            }
            if own_fences.contains(&sql.name) {
                continue;
            }
            assert!(
                sql.includes().contains(&"fragments/attempt_fence"),
                "{}: changes a running attempt without fragments/attempt_fence",
                sql.name
            );
            fenced += 1;
        }
        assert!(fenced >= 5, "{fenced} statements use the fence");
    }

    #[test]
    fn names_are_unique_and_match_their_files() {
        let mut names: Vec<&str> = ALL.iter().map(|sql| sql.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for sql in ALL {
            assert!(!folded(sql.text()).contains(" :"), "{}: an unconverted parameter", sql.name);
        }
    }

    /// Each statement is `sql/<module>/<function>.sql`: `src/<module>.rs` runs it, in the
    /// function the file is named for (or that function plus a word, when it runs several).
    #[test]
    fn every_statement_is_named_for_its_function() {
        // Steps named for what they do, each in the module that runs it.
        let steps = [
            "admission/admit",
            "admission/insert_cached",
            "admission/lock_app_exclusive",
            "admission/lock_app_shared",
            "admission/lock_scope",
            "admission/lock_system_exclusive",
            "admission/lock_system_shared",
            "admission/read_state",
            "admission/run_for_share",
            "create/insert_app_task",
            "create/insert_run_task",
            "provider_limits/ensure_slots",
        ];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for sql in ALL {
            let (module, file) = sql.name.split_once('/').unwrap();
            let code = std::fs::read_to_string(src.join(format!("{module}.rs")))
                .unwrap_or_else(|_| panic!("{}: no module src/{module}.rs", sql.name));
            let constant = ALL_NAMES.iter().find(|(_, name)| *name == sql.name).unwrap().0;
            assert!(code.contains(constant), "{}: src/{module}.rs does not run it", sql.name);
            if steps.contains(&sql.name) {
                continue;
            }
            let named = code.match_indices("fn ").any(|(at, _)| {
                let function: String =
                    code[at + 3..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                file == function
                    || file.strip_prefix(function.as_str()).is_some_and(|rest| rest.starts_with('_'))
            });
            assert!(named, "{}: no function of src/{module}.rs is named {file}", sql.name);
        }
    }

    /// Every file under `sql/` is a statement the store runs or a fragment of some: a statement
    /// nobody calls any more is deleted with its caller, not left behind.
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
        listed.extend(FRAGMENTS.iter().map(|fragment| fragment.name.to_owned()));
        listed.sort_unstable();
        assert_eq!(on_disk, listed);
    }
}
