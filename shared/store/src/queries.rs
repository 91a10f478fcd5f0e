//! Every statement of the store. Each one's full text is `shared/store/sql/<name>.sql`: open the
//! file to see exactly what runs and what it writes. Parameters are named (`:task_id`) and bound
//! by name (`Sql::bind`); `tests/snapshots/statements.snap` shows every final statement as
//! Postgres gets it.

//!
//! Error codes are bound as parameters (from `aitasks_contracts::ErrorCode`). Statuses stay
//! literals in the SQL: the partial indexes (`WHERE status = 'queued'`, ...) are chosen only when
//! the planner can see the status, which a parameter would hide.

use crate::statement::Sql;

pub(crate) static ADMIT: Sql = Sql::new("admission/admit", include_str!("../sql/admission/admit.sql"));
pub(crate) static INSERT_CACHED: Sql =
    Sql::new("admission/insert_cached", include_str!("../sql/admission/insert_cached.sql"));
pub(crate) static LOCK_APP_EXCLUSIVE: Sql =
    Sql::new("admission/lock_app_exclusive", include_str!("../sql/admission/lock_app_exclusive.sql"));
pub(crate) static LOCK_APP_SHARED: Sql =
    Sql::new("admission/lock_app_shared", include_str!("../sql/admission/lock_app_shared.sql"));
pub(crate) static LOCK_GLOBAL: Sql =
    Sql::new("admission/lock_global", include_str!("../sql/admission/lock_global.sql"));
pub(crate) static LOCK_SYSTEM_EXCLUSIVE: Sql =
    Sql::new("admission/lock_system_exclusive", include_str!("../sql/admission/lock_system_exclusive.sql"));
pub(crate) static LOCK_SYSTEM_SHARED: Sql =
    Sql::new("admission/lock_system_shared", include_str!("../sql/admission/lock_system_shared.sql"));
pub(crate) static LOCK_SCOPE: Sql =
    Sql::new("admission/lock_scope", include_str!("../sql/admission/lock_scope.sql"));
pub(crate) static READ_STATE: Sql =
    Sql::new("admission/read_state", include_str!("../sql/admission/read_state.sql"));
pub(crate) static RUN_FOR_SHARE: Sql =
    Sql::new("admission/run_for_share", include_str!("../sql/admission/run_for_share.sql"));
pub(crate) static CLAIM_MANY: Sql = Sql::new("batch/claim_many", include_str!("../sql/batch/claim_many.sql"));
pub(crate) static CLAIM_MISSES: Sql =
    Sql::new("batch/claim_misses", include_str!("../sql/batch/claim_misses.sql"));
pub(crate) static COMPLETE_MANY: Sql =
    Sql::new("batch/complete_many", include_str!("../sql/batch/complete_many.sql"));
pub(crate) static INSERT_TASKS: Sql =
    Sql::new("batch/insert_tasks", include_str!("../sql/batch/insert_tasks.sql"));
pub(crate) static MARK_SENT_MANY: Sql =
    Sql::new("batch/mark_sent_many", include_str!("../sql/batch/mark_sent_many.sql"));
pub(crate) static SELECT_BY_EFFECT_KEYS: Sql =
    Sql::new("batch/select_by_effect_keys", include_str!("../sql/batch/select_by_effect_keys.sql"));
pub(crate) static TASKS_OF_RUN: Sql =
    Sql::new("listing/tasks_of_run", include_str!("../sql/listing/tasks_of_run.sql"));
pub(crate) static TASKS_OF_SCOPE: Sql =
    Sql::new("listing/tasks_of_scope", include_str!("../sql/listing/tasks_of_scope.sql"));
pub(crate) static LEASE_PENDING: Sql =
    Sql::new("events/lease_pending", include_str!("../sql/events/lease_pending.sql"));
pub(crate) static MARK_DELIVERED: Sql =
    Sql::new("events/mark_delivered", include_str!("../sql/events/mark_delivered.sql"));
pub(crate) static PRUNE_DELIVERED: Sql =
    Sql::new("events/prune_delivered", include_str!("../sql/events/prune_delivered.sql"));
pub(crate) static CHECK: Sql = Sql::new("lease/check", include_str!("../sql/lease/check.sql"));
pub(crate) static CLAIM: Sql = Sql::new("lease/claim", include_str!("../sql/lease/claim.sql"));
pub(crate) static CLAIM_MISS: Sql = Sql::new("lease/claim_miss", include_str!("../sql/lease/claim_miss.sql"));
pub(crate) static HEARTBEAT: Sql = Sql::new("lease/heartbeat", include_str!("../sql/lease/heartbeat.sql"));
pub(crate) static REQUEUE: Sql = Sql::new("lease/requeue", include_str!("../sql/lease/requeue.sql"));
pub(crate) static DELETE_BATCH: Sql =
    Sql::new("owned/delete_batch", include_str!("../sql/owned/delete_batch.sql"));
pub(crate) static DELETE_RETAINED: Sql =
    Sql::new("owned/delete_retained", include_str!("../sql/owned/delete_retained.sql"));
pub(crate) static RELEASE: Sql = Sql::new("owned/release", include_str!("../sql/owned/release.sql"));
pub(crate) static UNRELEASED_SOURCES: Sql =
    Sql::new("owned/unreleased_sources", include_str!("../sql/owned/unreleased_sources.sql"));
pub(crate) static UNRELEASED_SOURCES_OF_STEP: Sql =
    Sql::new("owned/unreleased_sources_of_step", include_str!("../sql/owned/unreleased_sources_of_step.sql"));
pub(crate) static CANCEL_RUN: Sql = Sql::new("runs/cancel_run", include_str!("../sql/runs/cancel_run.sql"));
pub(crate) static CANCEL_RUN_TASKS: Sql =
    Sql::new("runs/cancel_run_tasks", include_str!("../sql/runs/cancel_run_tasks.sql"));
pub(crate) static FINISH_RUN_CANCEL: Sql =
    Sql::new("runs/finish_run_cancel", include_str!("../sql/runs/finish_run_cancel.sql"));
pub(crate) static INSERT_RUN: Sql = Sql::new("runs/insert_run", include_str!("../sql/runs/insert_run.sql"));
pub(crate) static PENDING_RUN_CANCELS: Sql =
    Sql::new("runs/pending_run_cancels", include_str!("../sql/runs/pending_run_cancels.sql"));
pub(crate) static SELECT_RUN: Sql = Sql::new("runs/select_run", include_str!("../sql/runs/select_run.sql"));
pub(crate) static PRUNE_USAGE: Sql =
    Sql::new("quota/prune_usage", include_str!("../sql/quota/prune_usage.sql"));
pub(crate) static SPEND_TASK: Sql = Sql::new("quota/spend_task", include_str!("../sql/quota/spend_task.sql"));
pub(crate) static OVERVIEW: Sql = Sql::new("stats/overview", include_str!("../sql/stats/overview.sql"));
pub(crate) static BACKLOG: Sql = Sql::new("stats/backlog", include_str!("../sql/stats/backlog.sql"));
pub(crate) static START_CALL: Sql =
    Sql::new("limits/start_call", include_str!("../sql/limits/start_call.sql"));
pub(crate) static ADD_TOKENS: Sql =
    Sql::new("limits/add_tokens", include_str!("../sql/limits/add_tokens.sql"));
pub(crate) static ENSURE_SLOTS: Sql =
    Sql::new("limits/ensure_slots", include_str!("../sql/limits/ensure_slots.sql"));
pub(crate) static TAKE_SLOT: Sql = Sql::new("limits/take_slot", include_str!("../sql/limits/take_slot.sql"));
pub(crate) static FREE_SLOT: Sql = Sql::new("limits/free_slot", include_str!("../sql/limits/free_slot.sql"));
pub(crate) static LIMITS_PRUNE_USAGE: Sql =
    Sql::new("limits/prune_usage", include_str!("../sql/limits/prune_usage.sql"));
pub(crate) static RELEASE_CLAIM: Sql =
    Sql::new("lease/release_claim", include_str!("../sql/lease/release_claim.sql"));
pub(crate) static COMPLETE: Sql = Sql::new("settle/complete", include_str!("../sql/settle/complete.sql"));
pub(crate) static COMPLETE_UNSCOPED: Sql =
    Sql::new("settle/complete_unscoped", include_str!("../sql/settle/complete_unscoped.sql"));
pub(crate) static FAIL: Sql = Sql::new("settle/fail", include_str!("../sql/settle/fail.sql"));
pub(crate) static FAIL_UNSCOPED: Sql =
    Sql::new("settle/fail_unscoped", include_str!("../sql/settle/fail_unscoped.sql"));
pub(crate) static END_CANCELED: Sql =
    Sql::new("settle/end_canceled", include_str!("../sql/settle/end_canceled.sql"));
pub(crate) static CLAIM_LOST: Sql = Sql::new("sweep/claim_lost", include_str!("../sql/sweep/claim_lost.sql"));
pub(crate) static OWED_BEYOND: Sql =
    Sql::new("sweep/owed_beyond", include_str!("../sql/sweep/owed_beyond.sql"));
pub(crate) static CLAIM_UNSENT: Sql =
    Sql::new("sweep/claim_unsent", include_str!("../sql/sweep/claim_unsent.sql"));
pub(crate) static EXPIRE_QUEUED: Sql =
    Sql::new("sweep/expire_queued", include_str!("../sql/sweep/expire_queued.sql"));
pub(crate) static EXPIRE_RUNNING: Sql =
    Sql::new("sweep/expire_running", include_str!("../sql/sweep/expire_running.sql"));
pub(crate) static MARK_SENT: Sql = Sql::new("sweep/mark_sent", include_str!("../sql/sweep/mark_sent.sql"));
pub(crate) static MARK_UNSENT: Sql =
    Sql::new("sweep/mark_unsent", include_str!("../sql/sweep/mark_unsent.sql"));
pub(crate) static PRUNE_ADMISSIONS: Sql =
    Sql::new("sweep/prune_admissions", include_str!("../sql/sweep/prune_admissions.sql"));
pub(crate) static INSERT_APP_TASK: Sql =
    Sql::new("tasks/insert_app_task", include_str!("../sql/tasks/insert_app_task.sql"));
pub(crate) static INSERT_RUN_TASK: Sql =
    Sql::new("tasks/insert_run_task", include_str!("../sql/tasks/insert_run_task.sql"));
pub(crate) static REQUEST_CANCEL: Sql =
    Sql::new("tasks/request_cancel", include_str!("../sql/tasks/request_cancel.sql"));
pub(crate) static SELECT_TASK: Sql =
    Sql::new("tasks/select_task", include_str!("../sql/tasks/select_task.sql"));
pub(crate) static SELECT_TASK_BY_EFFECT_KEY: Sql =
    Sql::new("tasks/select_task_by_effect_key", include_str!("../sql/tasks/select_task_by_effect_key.sql"));

/// All of them (the snapshot test prints each).
pub(crate) static ALL: [&Sql; 66] = [
    &ADMIT,
    &CLAIM_MANY,
    &CLAIM_MISSES,
    &COMPLETE_MANY,
    &INSERT_TASKS,
    &MARK_SENT_MANY,
    &SELECT_BY_EFFECT_KEYS,
    &TASKS_OF_RUN,
    &TASKS_OF_SCOPE,
    &INSERT_CACHED,
    &LOCK_APP_EXCLUSIVE,
    &LOCK_APP_SHARED,
    &LOCK_GLOBAL,
    &LOCK_SYSTEM_EXCLUSIVE,
    &LOCK_SYSTEM_SHARED,
    &LOCK_SCOPE,
    &READ_STATE,
    &RUN_FOR_SHARE,
    &LEASE_PENDING,
    &MARK_DELIVERED,
    &PRUNE_DELIVERED,
    &CHECK,
    &CLAIM,
    &CLAIM_MISS,
    &HEARTBEAT,
    &REQUEUE,
    &DELETE_BATCH,
    &DELETE_RETAINED,
    &RELEASE,
    &UNRELEASED_SOURCES,
    &UNRELEASED_SOURCES_OF_STEP,
    &CANCEL_RUN,
    &CANCEL_RUN_TASKS,
    &FINISH_RUN_CANCEL,
    &INSERT_RUN,
    &PENDING_RUN_CANCELS,
    &PRUNE_USAGE,
    &OVERVIEW,
    &BACKLOG,
    &START_CALL,
    &ADD_TOKENS,
    &ENSURE_SLOTS,
    &TAKE_SLOT,
    &FREE_SLOT,
    &LIMITS_PRUNE_USAGE,
    &RELEASE_CLAIM,
    &SPEND_TASK,
    &SELECT_RUN,
    &COMPLETE,
    &COMPLETE_UNSCOPED,
    &FAIL,
    &FAIL_UNSCOPED,
    &END_CANCELED,
    &CLAIM_LOST,
    &OWED_BEYOND,
    &CLAIM_UNSENT,
    &EXPIRE_QUEUED,
    &EXPIRE_RUNNING,
    &MARK_SENT,
    &MARK_UNSENT,
    &PRUNE_ADMISSIONS,
    &INSERT_APP_TASK,
    &INSERT_RUN_TASK,
    &REQUEST_CANCEL,
    &SELECT_TASK,
    &SELECT_TASK_BY_EFFECT_KEY,
];

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
}
